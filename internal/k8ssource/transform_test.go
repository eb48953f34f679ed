package k8ssource

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestTransformSelector: the informers keep a Service's selector only for
// the mesh, the one reader of it.
func TestTransformSelector(t *testing.T) {
	for _, mesh := range []bool{false, true} {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}
		src := &Source{}
		if mesh {
			src.meshNS = newMeshNamespaces()
		}
		got, err := src.trim(svc)
		if err != nil {
			t.Fatal(err)
		}
		out := got.(*objects.Service)
		if kept := out.Spec.Selector["app"] == "web"; kept != mesh {
			t.Errorf("mesh %v: selector %v", mesh, out.Spec.Selector)
		}
		if len(out.Spec.Ports) != 1 || out.Spec.Ports[0].Port != 80 {
			t.Errorf("mesh %v: ports %v, want the one port kept", mesh, out.Spec.Ports)
		}
	}
}

// TestSameIgnoresResourceVersion: the informers cache Services and
// EndpointSlices in the snapshot's forms, and a write that changes
// nothing a build reads (a new resourceVersion alone) causes no build,
// while one that changes an endpoint does.
func TestSameIgnoresResourceVersion(t *testing.T) {
	slice := func(rv, addr string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", ResourceVersion: rv, Labels: map[string]string{objects.ServiceNameLabel: "web"}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{addr}}},
		}
	}
	src := &Source{}
	trim := func(es *discoveryv1.EndpointSlice) runtime.Object {
		t.Helper()
		out, err := src.trim(es)
		if err != nil {
			t.Fatal(err)
		}
		return out.(runtime.Object)
	}
	a, b, c := trim(slice("1", "10.0.0.1")), trim(slice("2", "10.0.0.1")), trim(slice("3", "10.0.0.2"))
	if m, err := meta.Accessor(b); err != nil || m.GetResourceVersion() != "2" || m.GetName() != "web-1" {
		t.Errorf("the cached slice's metadata: %v %v", m, err)
	}
	if !sameSlice(a, b) || sameSlice(b, c) {
		t.Errorf("sameSlice: resourceVersion alone %v (want true), another address %v (want false)", sameSlice(a, b), sameSlice(b, c))
	}
	svc := func(rv string, port int32) runtime.Object {
		out, err := src.trim(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: rv}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: port}}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.(runtime.Object)
	}
	if !sameService(svc("1", 80), svc("2", 80)) || sameService(svc("1", 80), svc("2", 81)) {
		t.Error("sameService must ignore the resourceVersion alone, and see a port change")
	}
}
