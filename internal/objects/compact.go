package objects

import (
	"reflect"
	goruntime "runtime"
	"sync"
	"unique"
	"weak"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Compact makes an object that nothing else references yet smaller
// before a source keeps it. It drops what no build reads:
//
//   - from every object, metadata.managedFields and kubectl's
//     last-applied copy of the whole object;
//   - from Services and EndpointSlices, which a cluster holds by the
//     hundred thousand, their uid and ownerReferences (the status writer
//     reads a uid, but only of Switchyard's own objects) and a slice's
//     annotations;
//   - from an EndpointSlice's endpoints, their targetRef, hostname, hints
//     and deprecatedTopology: a build reads an endpoint's addresses,
//     conditions, zone and node name only.
//
// A Service's selector stays: the mesh reads it to find the pods a
// TrafficTarget names (CompactWithoutMesh drops it). The strings that
// thousands of objects repeat (apiVersion, kind, namespace, label keys and
// short values, port names, protocols, zones, node names) are shared
// instead of each object holding its own copy, and so are the pointers
// an EndpointSlice holds them by, its port numbers and its endpoints'
// conditions. What it shares is never written through: a snapshot's
// objects are immutable, and whatever edits one edits a deep copy.
// TestCompactKeeps lists what a build may read.
func Compact(obj runtime.Object) {
	compact(obj, true, true)
}

// CompactWithoutMesh is Compact for a source whose builds run without the
// mesh (dag.Options.Mesh off): a Service's selector, which only the mesh
// reads, goes too. A one-entry selector map costs about 300 bytes, a
// third of a Service.
func CompactWithoutMesh(obj runtime.Object) {
	compact(obj, false, true)
}

// CompactShared is Compact, or CompactWithoutMesh when mesh is off, for an
// object whose label and selector values its decoder already shares with
// the other objects it read together: only their keys are interned. An
// interned value costs an entry in unique's map, more than the copy it
// saves when the value repeats two or three times, as a Service's name
// does in its selector and its slices' labels; interning them was a
// seventh of the read's CPU at 10,000 roots.
func CompactShared(obj runtime.Object, mesh bool) {
	compact(obj, mesh, false)
}

func compact(obj runtime.Object, mesh, values bool) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a[corev1.LastAppliedConfigAnnotation] != "" {
			delete(a, corev1.LastAppliedConfigAnnotation)
			if len(a) == 0 {
				m.SetAnnotations(nil)
			}
		}
		m.SetNamespace(Intern(m.GetNamespace()))
		m.SetLabels(internMap(m.GetLabels(), values))
	}
	if t := typeMeta(obj); t != nil {
		t.APIVersion, t.Kind = Intern(t.APIVersion), Intern(t.Kind)
	}
	switch o := obj.(type) {
	case *corev1.Service:
		o.UID, o.OwnerReferences = "", nil
		for i := range o.Spec.Ports {
			p := &o.Spec.Ports[i]
			p.Name = Intern(p.Name)
			p.Protocol = corev1.Protocol(Intern(string(p.Protocol)))
		}
		if mesh {
			o.Spec.Selector = internMap(o.Spec.Selector, values)
		} else {
			o.Spec.Selector = nil
		}
	case *discoveryv1.EndpointSlice:
		o.UID, o.OwnerReferences, o.Annotations = "", nil, nil
		compactSlice(o)
	}
}

func compactSlice(es *discoveryv1.EndpointSlice) {
	es.AddressType = discoveryv1.AddressType(Intern(string(es.AddressType)))
	for i := range es.Ports {
		p := &es.Ports[i]
		p.Name = sharedString(p.Name)
		p.Protocol = sharedProtocol(p.Protocol)
		p.Port = sharedPort(p.Port)
		p.AppProtocol = sharedString(p.AppProtocol)
	}
	for i := range es.Endpoints {
		e := &es.Endpoints[i]
		e.TargetRef, e.Hostname, e.Hints, e.DeprecatedTopology = nil, nil, nil, nil
		e.Zone = sharedString(e.Zone)
		e.NodeName = sharedString(e.NodeName)
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

// internMap shares keys, and, if values is set, values short enough to
// repeat ("app": "web" repeats; a hash rarely does).
func internMap(m map[string]string, values bool) map[string]string {
	for k, v := range m {
		if values && len(v) <= MaxSharedValue {
			v = Intern(v)
		}
		m[Intern(k)] = v // assigning an equal key stores the shared one
	}
	return m
}

// MaxSharedValue is the longest label or selector value that is shared.
const MaxSharedValue = 32

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

// pointers are the read-only pointers objects share (see Compact): a
// pointer to a zone is 16 bytes, and 200,000 endpoints in three zones
// need three of them. Entries are weak, so that the names of Nodes long
// gone do not stay.
type pointers[T comparable] struct {
	mu sync.Mutex
	m  map[T]weak.Pointer[T]
}

var (
	stringPointers   = pointers[string]{m: map[string]weak.Pointer[string]{}}
	protocolPointers = pointers[corev1.Protocol]{m: map[corev1.Protocol]weak.Pointer[corev1.Protocol]{}}
	portPointers     = pointers[int32]{m: map[int32]weak.Pointer[int32]{}}
)

// share returns a pointer to a value equal to *p, the same for every
// caller while anyone holds it.
func (t *pointers[T]) share(p *T, intern func(T) T) *T {
	if p == nil {
		return nil
	}
	v := *p
	t.mu.Lock()
	defer t.mu.Unlock()
	if q := t.m[v].Value(); q != nil {
		return q
	}
	q := new(T)
	*q = intern(v)
	t.m[v] = weak.Make(q)
	goruntime.AddCleanup(q, t.forget, v)
	return q
}

// forget drops v's entry once its pointer is gone, unless v was shared
// again since.
func (t *pointers[T]) forget(v T) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[v].Value() == nil {
		delete(t.m, v)
	}
}

func sharedString(s *string) *string { return stringPointers.share(s, Intern) }

func sharedProtocol(p *corev1.Protocol) *corev1.Protocol {
	return protocolPointers.share(p, func(p corev1.Protocol) corev1.Protocol { return corev1.Protocol(Intern(string(p))) })
}

func sharedPort(p *int32) *int32 { return portPointers.share(p, func(n int32) int32 { return n }) }

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
