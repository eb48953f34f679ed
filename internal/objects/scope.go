package objects

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EndpointScope adds to services the Services whose endpoints a change
// touches, and reports whether it touches every Service's: a Node's drain
// annotation applies to whatever endpoints run on it. It must be called
// before the change is applied: an EndpointSlice counts for the Service it
// belonged to as well as the one it now names, so that a slice moving
// between Services updates both. It is what decides how much an endpoint
// change recomputes (site/architecture.md, decision 4).
func (s *Snapshot) EndpointScope(c Change, services map[types.NamespacedName]bool) (all bool) {
	switch c.Key.Kind {
	case KindEndpointSlice:
		if old := s.EndpointSlices[c.Key.NamespacedName()]; old != nil {
			if svc, ok := SliceService(old); ok {
				services[svc] = true
			}
		}
		switch es := c.Object.(type) {
		case *EndpointSlice:
			if svc, ok := SliceService(es); ok {
				services[svc] = true
			}
		case *discoveryv1.EndpointSlice:
			if name := es.Labels[ServiceNameLabel]; name != "" {
				services[types.NamespacedName{Namespace: es.Namespace, Name: name}] = true
			}
		}
	case KindNode:
		return true
	}
	return false
}
