package objects_test

import (
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
