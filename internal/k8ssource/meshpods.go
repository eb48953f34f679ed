package k8ssource

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// meshNamespaces decides which Pods reach builds: only those of the
// namespaces in the mesh, the namespaces annotated with objects.MeshAnnotation
// or holding a Service so annotated. The mesh reads Pods only to tell who
// runs as which ServiceAccount there; a Pod elsewhere is no source a
// TrafficTarget can name and selects no mesh Service, and passing it on
// would rebuild the mesh on every pod start in the cluster.
//
// The informer still caches every Pod, trimmed by transform to its
// labels, ServiceAccount and IPs, so that a namespace joining the mesh
// has its Pods at once, read from the cache, with no re-list and no race
// between the Namespace and Pod watches (see site/mesh.md, "Which Pods
// are read"). It is owned by the goroutine that calls take.
type meshNamespaces struct {
	annotated map[string]bool
	// services are the annotated Services, counted per namespace in
	// perNamespace.
	services     map[objects.Key]bool
	perNamespace map[string]int
}

func newMeshNamespaces() *meshNamespaces {
	return &meshNamespaces{annotated: map[string]bool{}, services: map[objects.Key]bool{}, perNamespace: map[string]int{}}
}

func (m *meshNamespaces) has(ns string) bool { return m.annotated[ns] || m.perNamespace[ns] > 0 }

// updateMeshNamespaces follows the dirty Namespaces and Services into the set and marks
// dirty every cached Pod of a namespace that joined or left it, so that
// the same batch adds or removes them.
func (s *Source) updateMeshNamespaces(dirty map[objects.Key]struct{}) {
	m := s.meshNS
	if m == nil {
		return
	}
	changed := map[string]bool{}
	for k := range dirty {
		if k.Kind != objects.KindNamespace && k.Kind != objects.KindService {
			continue
		}
		ns := k.Namespace
		if k.Kind == objects.KindNamespace {
			ns = k.Name
		}
		before := m.has(ns)
		switch o := s.lookup(k).(type) {
		case *corev1.Namespace:
			m.annotated[ns] = o.Annotations[objects.MeshAnnotation] == "true"
		case *objects.Service:
			m.setService(k, o.Annotations[objects.MeshAnnotation] == "true")
		default: // deleted
			if k.Kind == objects.KindNamespace {
				delete(m.annotated, ns)
			} else {
				m.setService(k, false)
			}
		}
		if !m.annotated[ns] {
			delete(m.annotated, ns)
		}
		if m.has(ns) != before {
			changed[ns] = true
		}
	}
	if len(changed) == 0 {
		return
	}
	for _, w := range s.byKind[objects.KindPod] {
		for _, id := range w.informer.GetIndexer().ListKeys() {
			ns, name, ok := strings.Cut(id, "/")
			if ok && changed[ns] {
				dirty[objects.Key{Kind: objects.KindPod, Namespace: ns, Name: name}] = struct{}{}
			}
		}
	}
	// Pods read early (early.go) are not in the informers' caches yet, and
	// their Add events will not mark them again.
	s.mu.Lock()
	for k := range s.early {
		if k.Kind == objects.KindPod && changed[k.Namespace] {
			dirty[k] = struct{}{}
		}
	}
	s.mu.Unlock()
}

func (m *meshNamespaces) setService(k objects.Key, annotated bool) {
	switch {
	case annotated && !m.services[k]:
		m.services[k] = true
		m.perNamespace[k.Namespace]++
	case !annotated && m.services[k]:
		delete(m.services, k)
		if m.perNamespace[k.Namespace]--; m.perNamespace[k.Namespace] == 0 {
			delete(m.perNamespace, k.Namespace)
		}
	}
}

// podInMesh reports whether a Pod of namespace ns reaches builds.
func (s *Source) podInMesh(ns string) bool { return s.meshNS == nil || s.meshNS.has(ns) }
