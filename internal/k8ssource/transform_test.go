package k8ssource

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		out := got.(*corev1.Service)
		if kept := out.Spec.Selector["app"] == "web"; kept != mesh {
			t.Errorf("mesh %v: selector %v", mesh, out.Spec.Selector)
		}
		if len(out.Spec.Ports) != 1 || out.Spec.Ports[0].Port != 80 {
			t.Errorf("mesh %v: ports %v, want the one port kept", mesh, out.Spec.Ports)
		}
	}
}
