package objects_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

func kubeService() *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
			Annotations: map[string]string{objects.DrainAnnotation: "true"}},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "web.example.com",
			Ports:        []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("h2c")}},
			Selector:     map[string]string{"app": "web"},
		},
	}
}

// TestCompactServiceKeepsWhatBuildsRead requires a compact Service to give
// back everything a build reads of the Kubernetes one, and a Snapshot to
// hold a Kubernetes Service in the compact form, by Upsert and SnapshotOf.
func TestCompactServiceKeepsWhatBuildsRead(t *testing.T) {
	svc := kubeService()
	c := objects.CompactService(svc)
	if diff := cmp.Diff(svc, c.Kubernetes()); diff != "" {
		t.Errorf("the compact Service reads differently (-kubernetes +compact):\n%s", diff)
	}
	if gvk := c.GetObjectKind().GroupVersionKind(); gvk != corev1.SchemeGroupVersion.WithKind("Service") {
		t.Errorf("kind %v", gvk)
	}
	key := objects.Key{Kind: objects.KindService, Namespace: "shop", Name: "web"}
	s := objects.NewSnapshot()
	if _, err := s.Upsert(kubeService()); err != nil {
		t.Fatal(err)
	}
	bulk, err := objects.SnapshotOf([]runtime.Object{kubeService()})
	if err != nil {
		t.Fatal(err)
	}
	for name, snap := range map[string]*objects.Snapshot{"Upsert": s, "SnapshotOf": bulk} {
		got, ok := snap.Get(key).(*objects.Service)
		if !ok || got.Spec.Ports[0].Port != 80 || !objects.Drained(got.Annotations) {
			t.Errorf("%s: Get = %#v, want the compact Service", name, snap.Get(key))
		}
	}
}

// TestServiceCopiesAreTheirOwn requires Kubernetes and DeepCopyObject to
// return copies whose edits leave the Service as it was: a snapshot's
// objects are never written.
func TestServiceCopiesAreTheirOwn(t *testing.T) {
	c := objects.CompactService(kubeService())
	k := c.Kubernetes()
	k.Annotations["x"], k.Spec.Selector["x"], *k.Spec.Ports[0].AppProtocol = "y", "y", "h2"
	d := c.DeepCopyObject().(*objects.Service)
	d.Spec.Ports[0].Port = 81
	if diff := cmp.Diff(kubeService(), c.Kubernetes()); diff != "" {
		t.Errorf("editing a copy changed the Service:\n%s", diff)
	}
}
