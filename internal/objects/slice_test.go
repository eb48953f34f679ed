package objects_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestCompactSliceKeepsWhatBuildsRead requires a compact EndpointSlice to
// give back everything a build reads of the Kubernetes one: each of the
// three conditions unset, false or true; an endpoint without an address
// apart from one with an empty address; zone and node name set or not;
// the ports; the Service label.
func TestCompactSliceKeepsWhatBuildsRead(t *testing.T) {
	es := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{objects.ServiceNameLabel: "web"}},
		AddressType: discoveryv1.AddressTypeIPv6,
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080), AppProtocol: ptr.To("h2c")},
			{Port: ptr.To[int32](9090)},
		},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"fd00::1"}, Zone: ptr.To("z1"), NodeName: ptr.To("n1"),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)}},
			{Addresses: []string{""}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(false)}},
			{},
		},
	}
	c := objects.CompactSlice(es)
	if svc, ok := objects.SliceService(c); !ok || svc.Name != "web" || svc.Namespace != "shop" {
		t.Errorf("SliceService = %v, %v; want shop/web", svc, ok)
	}
	if gvk := c.GetObjectKind().GroupVersionKind(); gvk != discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice") {
		t.Errorf("kind %v", gvk)
	}
	if diff := cmp.Diff(es, c.Kubernetes()); diff != "" {
		t.Errorf("the compact slice reads differently (-kubernetes +compact):\n%s", diff)
	}
	if !c.Endpoints[1].HasAddress() || c.Endpoints[2].HasAddress() {
		t.Error("an empty address must read as an address, and none as none")
	}

	unlabelled := es.DeepCopy()
	unlabelled.Labels = nil
	if _, ok := objects.SliceService(objects.CompactSlice(unlabelled)); ok {
		t.Error("a slice without the label belongs to no Service")
	}
}

// TestSnapshotHoldsCompactSlices requires Upsert to hold a Kubernetes
// EndpointSlice in the compact form, and SnapshotOf to do the same.
func TestSnapshotHoldsCompactSlices(t *testing.T) {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{objects.ServiceNameLabel: "web"}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
	}
	key := objects.Key{Kind: objects.KindEndpointSlice, Namespace: "shop", Name: "web-1"}
	s := objects.NewSnapshot()
	if _, err := s.Upsert(es); err != nil {
		t.Fatal(err)
	}
	bulk, err := objects.SnapshotOf([]runtime.Object{es})
	if err != nil {
		t.Fatal(err)
	}
	for name, snap := range map[string]*objects.Snapshot{"Upsert": s, "SnapshotOf": bulk} {
		got, ok := snap.Get(key).(*objects.EndpointSlice)
		if !ok || got.Endpoints[0].Address != "10.0.0.1" {
			t.Errorf("%s: Get = %#v, want the compact slice", name, snap.Get(key))
		}
		if list := snap.SlicesFor(types.NamespacedName{Namespace: "shop", Name: "web"}); len(list) != 1 || list[0] != got {
			t.Errorf("%s: SlicesFor = %v", name, list)
		}
	}
}
