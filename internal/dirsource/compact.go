package dirsource

import (
	"unique"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// compact makes a decoded object smaller as it is read. It drops what no
// build reads (managedFields and kubectl's last-applied copy of the
// object; a Service's selector is kept, since the mesh reads it to find
// the pods a TrafficTarget names), and the strings that
// thousands of objects repeat (apiVersion, kind, namespace, label keys,
// port names, protocols, zones) are shared instead of each object holding
// its own copy, and so are the endpoint conditions, which are pointers to
// one of two booleans. What compact shares is never written through: the
// snapshot's objects are immutable, and anything that edits one edits a
// deep copy.
func compact(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a != nil {
			delete(a, corev1.LastAppliedConfigAnnotation)
		}
	}
	switch o := obj.(type) {
	case *discoveryv1.EndpointSlice:
		compactSlice(o)
	case *corev1.Service:
		compactMeta(&o.TypeMeta, &o.ObjectMeta)
		for i := range o.Spec.Ports {
			p := &o.Spec.Ports[i]
			p.Name = intern(p.Name)
			p.Protocol = corev1.Protocol(intern(string(p.Protocol)))
		}
		o.Spec.Selector = internMap(o.Spec.Selector)
	case *switchyardv1.HTTPProxy:
		compactMeta(&o.TypeMeta, &o.ObjectMeta)
	case *corev1.Secret:
		compactMeta(&o.TypeMeta, &o.ObjectMeta)
	}
}

func compactSlice(es *discoveryv1.EndpointSlice) {
	compactMeta(&es.TypeMeta, &es.ObjectMeta)
	es.AddressType = discoveryv1.AddressType(intern(string(es.AddressType)))
	for i := range es.Ports {
		p := &es.Ports[i]
		p.Name = internPtr(p.Name)
		if p.Protocol != nil {
			proto := corev1.Protocol(intern(string(*p.Protocol)))
			p.Protocol = &proto
		}
	}
	for i := range es.Endpoints {
		e := &es.Endpoints[i]
		e.Zone = internPtr(e.Zone)
		e.NodeName = internPtr(e.NodeName)
		c := &e.Conditions
		c.Ready, c.Serving, c.Terminating = sharedBool(c.Ready), sharedBool(c.Serving), sharedBool(c.Terminating)
	}
}

func compactMeta(t *metav1.TypeMeta, m *metav1.ObjectMeta) {
	t.APIVersion, t.Kind = intern(t.APIVersion), intern(t.Kind)
	m.Namespace = intern(m.Namespace)
	m.Labels = internMap(m.Labels)
}

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// internPtr shares the string; the pointer itself stays the object's.
func internPtr(s *string) *string {
	if s == nil {
		return nil
	}
	*s = intern(*s)
	return s
}

// internMap shares keys, and values that are short enough to repeat
// ("app": "web" repeats; a hash rarely does).
func internMap(m map[string]string) map[string]string {
	for k, v := range m {
		if len(v) <= 32 {
			v = intern(v)
		}
		m[intern(k)] = v // assigning an equal key stores the shared one
	}
	return m
}

var yes, no = true, false

// sharedBool returns a pointer to one of two package-wide booleans. They
// are read-only: see compact.
func sharedBool(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &yes
	default:
		return &no
	}
}
