package objects

import (
	"reflect"
	"unique"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Compact makes an object that nothing else references yet smaller
// before a source keeps it. It drops what no build reads from any object
// (metadata.managedFields and kubectl's last-applied copy of the whole
// object; a Service's selector stays, since the mesh reads it to find the
// pods a TrafficTarget names), and the strings that thousands of objects repeat
// (apiVersion, kind, namespace, label keys and short values, port names,
// protocols, zones, node names) are shared instead of each object holding
// its own copy, and endpoint conditions point at one of two booleans.
// What it shares is never written through: a snapshot's objects are
// immutable, and whatever edits one edits a deep copy.
func Compact(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a[corev1.LastAppliedConfigAnnotation] != "" {
			delete(a, corev1.LastAppliedConfigAnnotation)
			if len(a) == 0 {
				m.SetAnnotations(nil)
			}
		}
		m.SetNamespace(Intern(m.GetNamespace()))
		m.SetLabels(internMap(m.GetLabels()))
	}
	if t := typeMeta(obj); t != nil {
		t.APIVersion, t.Kind = Intern(t.APIVersion), Intern(t.Kind)
	}
	switch o := obj.(type) {
	case *corev1.Service:
		for i := range o.Spec.Ports {
			p := &o.Spec.Ports[i]
			p.Name = Intern(p.Name)
			p.Protocol = corev1.Protocol(Intern(string(p.Protocol)))
		}
		o.Spec.Selector = internMap(o.Spec.Selector)
	case *discoveryv1.EndpointSlice:
		compactSlice(o)
	}
}

func compactSlice(es *discoveryv1.EndpointSlice) {
	es.AddressType = discoveryv1.AddressType(Intern(string(es.AddressType)))
	for i := range es.Ports {
		p := &es.Ports[i]
		p.Name = internPtr(p.Name)
		if p.Protocol != nil {
			proto := corev1.Protocol(Intern(string(*p.Protocol)))
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

// Intern returns s, shared with every other interned equal string.
func Intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// internPtr shares the string; the pointer itself stays the object's.
func internPtr(s *string) *string {
	if s != nil {
		*s = Intern(*s)
	}
	return s
}

// internMap shares keys, and values short enough to repeat ("app": "web"
// repeats; a hash rarely does).
func internMap(m map[string]string) map[string]string {
	for k, v := range m {
		if len(v) <= 32 {
			v = Intern(v)
		}
		m[Intern(k)] = v // assigning an equal key stores the shared one
	}
	return m
}

var yes, no = true, false

// sharedBool returns a pointer to one of two package-wide booleans, which
// are read-only (see Compact).
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

// typeMeta is the TypeMeta every Kubernetes type embeds, nil for an object
// without one. meta.TypeAccessor would not do: it sets apiVersion by
// formatting a parsed group and version again, a fresh string each time.
func typeMeta(obj runtime.Object) *metav1.TypeMeta {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("TypeMeta")
	if !f.IsValid() || !f.CanAddr() {
		return nil
	}
	t, _ := f.Addr().Interface().(*metav1.TypeMeta)
	return t
}
