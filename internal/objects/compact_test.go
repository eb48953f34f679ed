package objects_test

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

func slice(zone string, ready bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			// Cloned, so that the two objects start with copies of their
			// own.
			Namespace:     strings.Clone("shop"),
			Name:          "web-" + zone,
			Labels:        map[string]string{objects.ServiceNameLabel: strings.Clone("web")},
			Annotations:   map[string]string{corev1.LastAppliedConfigAnnotation: "{...}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"10.0.0.1"},
			Zone:       ptr.To(strings.Clone(zone)),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(true)},
		}},
	}
}

// TestCompact: what no build reads is gone, everything else reads the
// same, and equal strings and conditions are shared between objects.
func TestCompact(t *testing.T) {
	a, b := slice("z1", true), slice("z1", false)
	objects.Compact(a)
	objects.Compact(b)
	if a.ManagedFields != nil || a.Annotations != nil {
		t.Errorf("managedFields %v and annotations %v: want both dropped", a.ManagedFields, a.Annotations)
	}
	if a.Namespace != "shop" || a.Labels[objects.ServiceNameLabel] != "web" || *a.Endpoints[0].Zone != "z1" {
		t.Errorf("compacting changed what is read: %+v", a.ObjectMeta)
	}
	if !*a.Endpoints[0].Conditions.Ready || *b.Endpoints[0].Conditions.Ready || a.Endpoints[0].Conditions.Terminating != nil {
		t.Errorf("conditions changed: ready %v and %v, terminating %v", *a.Endpoints[0].Conditions.Ready, *b.Endpoints[0].Conditions.Ready, a.Endpoints[0].Conditions.Terminating)
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if !same(a.Namespace, b.Namespace) || !same(*a.Endpoints[0].Zone, *b.Endpoints[0].Zone) || !same(a.Labels["kubernetes.io/service-name"], b.Labels["kubernetes.io/service-name"]) {
		t.Error("equal strings of two objects are not shared")
	}
	if a.Endpoints[0].Conditions.Serving != b.Endpoints[0].Conditions.Serving {
		t.Error("equal conditions of two objects are not shared")
	}
}

// TestCompactKeeps lists what Compact keeps of a Service and an
// EndpointSlice, which is everything a build may read of them: a reader
// of a field not listed here reads nothing, and must add the field to
// Compact and to this test.
func TestCompactKeeps(t *testing.T) {
	meta := func(labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Namespace: "shop", Name: "web", Generation: 3, ResourceVersion: "42", Labels: labels,
			Annotations: map[string]string{"switchyard.dev/upstream-protocol.h2": "http"},
		}
	}
	svcPort := corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("h2"), Port: 80, TargetPort: intstr.FromString("web")}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(map[string]string{"app": "web"}),
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "web.example.com", Ports: []corev1.ServicePort{svcPort}, Selector: map[string]string{"app": "web"}},
	}
	wantSvc := svc.DeepCopy()
	svc.UID, svc.ManagedFields = "1234", []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	svc.OwnerReferences = []metav1.OwnerReference{{Kind: "Deployment", Name: "web"}}
	svc.Annotations[corev1.LastAppliedConfigAnnotation] = "{...}"
	withoutMesh, shared, sharedWithoutMesh := svc.DeepCopy(), svc.DeepCopy(), svc.DeepCopy()
	objects.Compact(svc)
	if diff := cmp.Diff(wantSvc, svc); diff != "" {
		t.Errorf("Compact(Service) (-want +got):\n%s", diff)
	}
	objects.CompactShared(shared, true)
	if diff := cmp.Diff(wantSvc, shared); diff != "" {
		t.Errorf("CompactShared(Service, mesh) (-want +got):\n%s", diff)
	}
	objects.CompactWithoutMesh(withoutMesh)
	objects.CompactShared(sharedWithoutMesh, false)
	wantSvc.Spec.Selector = nil
	if diff := cmp.Diff(wantSvc, withoutMesh); diff != "" {
		t.Errorf("CompactWithoutMesh(Service) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSvc, sharedWithoutMesh); diff != "" {
		t.Errorf("CompactShared(Service, no mesh) (-want +got):\n%s", diff)
	}

	ep := discoveryv1.Endpoint{
		Addresses:  []string{"10.0.0.1"},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)},
		Zone:       ptr.To("z1"),
		NodeName:   ptr.To("node-1"),
	}
	es := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  meta(map[string]string{objects.ServiceNameLabel: "web"}),
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080), AppProtocol: ptr.To("h2")}},
		Endpoints:   []discoveryv1.Endpoint{ep},
	}
	wantSlice := es.DeepCopy()
	wantSlice.Annotations = nil
	es.UID, es.OwnerReferences = "5678", []metav1.OwnerReference{{Kind: "Service", Name: "web"}}
	e := &es.Endpoints[0]
	e.TargetRef, e.Hostname = &corev1.ObjectReference{Kind: "Pod", Name: "web-1"}, ptr.To("web-1")
	e.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z1"}}}
	e.DeprecatedTopology = map[string]string{"kubernetes.io/hostname": "node-1"}
	sharedSlice := es.DeepCopy()
	objects.Compact(es)
	if diff := cmp.Diff(wantSlice, es); diff != "" {
		t.Errorf("Compact(EndpointSlice) (-want +got):\n%s", diff)
	}
	objects.CompactShared(sharedSlice, true)
	if diff := cmp.Diff(wantSlice, sharedSlice); diff != "" {
		t.Errorf("CompactShared(EndpointSlice) (-want +got):\n%s", diff)
	}
}

// TestCompactSharesPointers: the pointers an EndpointSlice holds its
// zones, node names and port fields by are one per value, not one per
// endpoint.
func TestCompactSharesPointers(t *testing.T) {
	a, b := slice("z1", true), slice("z1", true)
	for _, es := range []*discoveryv1.EndpointSlice{a, b} {
		es.Endpoints[0].NodeName = ptr.To(strings.Clone("node-1"))
		es.Ports = []discoveryv1.EndpointPort{{Name: ptr.To(strings.Clone("http")), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}}
		objects.Compact(es)
	}
	ea, eb, pa, pb := a.Endpoints[0], b.Endpoints[0], a.Ports[0], b.Ports[0]
	if ea.Zone != eb.Zone || ea.NodeName != eb.NodeName || pa.Name != pb.Name || pa.Protocol != pb.Protocol || pa.Port != pb.Port {
		t.Errorf("equal values are held by different pointers: zone %p %p, node %p %p, port name %p %p, protocol %p %p, port %p %p",
			ea.Zone, eb.Zone, ea.NodeName, eb.NodeName, pa.Name, pb.Name, pa.Protocol, pb.Protocol, pa.Port, pb.Port)
	}
	if *ea.Zone != "z1" || *ea.NodeName != "node-1" || *pa.Name != "http" || *pa.Protocol != corev1.ProtocolTCP || *pa.Port != 8080 {
		t.Errorf("sharing changed the values: %+v %+v", ea, pa)
	}
	c := slice("z2", true)
	objects.Compact(c)
	if c.Endpoints[0].Zone == ea.Zone || *c.Endpoints[0].Zone != "z2" {
		t.Errorf("zone z2 reads %q", *c.Endpoints[0].Zone)
	}
}
