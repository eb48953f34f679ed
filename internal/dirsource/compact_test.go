package dirsource

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestCompact requires what no build reads to be dropped as a manifest is
// read, and repeated strings to be shared between objects.
func TestCompact(t *testing.T) {
	const manifests = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"big": "copy"}'
    keep: me
  managedFields: [{manager: kubectl, operation: Apply}]
spec:
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-a, namespace: shop, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1], zone: zone-a, conditions: {ready: true}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-b, namespace: shop, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.2], zone: zone-a, conditions: {ready: true}}]
`
	objs, problems := decodeFile("c.yaml", []byte(manifests), newOptions(nil).compact())
	if len(problems) > 0 || len(objs) != 3 {
		t.Fatalf("%d objects, problems %v", len(objs), problems)
	}
	svc := objs[0].obj.(*objects.Service)
	// The selector stays: the mesh reads it to find a Service's pods.
	if svc.Spec.Selector["app"] != "web" || len(svc.Annotations) != 1 || svc.Annotations["keep"] != "me" {
		t.Errorf("selector %v, annotations %v: want app=web, keep only", svc.Spec.Selector, svc.Annotations)
	}
	// Slices are held as a snapshot holds them, with no apiVersion.
	a, b := objs[1].obj.(*objects.EndpointSlice), objs[2].obj.(*objects.EndpointSlice)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if a.Endpoints[0].Zone != b.Endpoints[0].Zone || !same(a.Namespace, b.Namespace) {
		t.Error("zone and namespace are not shared between the slices")
	}
	if !same(a.Service, b.Service) {
		t.Error("the Service's name is not shared between its slices' labels")
	}
	if a.Endpoints[0].Conditions().Ready != b.Endpoints[0].Conditions().Ready || !*a.Endpoints[0].Conditions().Ready {
		t.Error("ready condition is not one shared true")
	}
}

// TestMeshKeepsSelectors requires a tree read for builds without the mesh
// to hold Services without their selectors, on the first read and on
// every read again, and one read for the mesh (or told nothing) to keep
// them: the mesh finds a Service's pods by its selector. KeepAll keeps
// everything whatever the mesh.
func TestMeshKeepsSelectors(t *testing.T) {
	const web = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: %d}]}
`
	root := t.TempDir()
	file := filepath.Join(root, "web.yaml")
	write := func(port int) {
		t.Helper()
		if err := os.WriteFile(file, fmt.Appendf(nil, web, port), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	selector := func(obj runtime.Object) map[string]string {
		t.Helper()
		// KeepAll keeps the Kubernetes object; a snapshot holds its own.
		switch svc := obj.(type) {
		case *objects.Service:
			return svc.Spec.Selector
		case *corev1.Service:
			return svc.Spec.Selector
		}
		t.Fatalf("got %T, want a Service", obj)
		return nil
	}
	webKey := objects.Key{Kind: objects.KindService, Namespace: "shop", Name: "web"}
	write(80)
	for _, tt := range []struct {
		name string
		opts []Option
		want string
	}{
		{"default", nil, "web"},
		{"mesh", []Option{Mesh(true)}, "web"},
		{"without mesh", []Option{Mesh(false)}, ""},
		{"keep all", []Option{Mesh(false), KeepAll()}, "web"},
	} {
		snap, problems, err := Load(root, tt.opts...)
		if err != nil || len(problems) > 0 {
			t.Fatalf("%s: Load: %v %v", tt.name, err, problems)
		}
		if got := selector(snap.Get(webKey))["app"]; got != tt.want {
			t.Errorf("%s: Load: selector app=%q, want %q", tt.name, got, tt.want)
		}
		objs, _ := Decode("web.yaml", fmt.Appendf(nil, web, 80), tt.opts...)
		if got := selector(objs[0].Object)["app"]; got != tt.want {
			t.Errorf("%s: Decode: selector app=%q, want %q", tt.name, got, tt.want)
		}
	}

	tr := newTree(root, newOptions([]Option{Mesh(false)}))
	tr.sync(".", nil, false)
	tr.changes()
	write(81)
	tr.sync(".", nil, false)
	changes := tr.changes()
	if len(changes) != 1 || changes[0].Key != webKey {
		t.Fatalf("changes after an edit: %v, want web's", changes)
	}
	if sel := selector(changes[0].Object); sel != nil {
		t.Errorf("re-read without the mesh: selector %v, want none", sel)
	}
}

// TestSelectorSharesLabel requires a Service's selector and its slice's
// label, read by the hand decoder from one file, to hold one copy of the
// Service's name: objects.CompactShared leaves that sharing to the decoder.
func TestSelectorSharesLabel(t *testing.T) {
	const manifests = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web-0123}
  ports: [{name: http, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-a, namespace: shop, labels: {kubernetes.io/service-name: web-0123}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1], conditions: {ready: true}}]
`
	objs, problems := decodeFile("c.yaml", []byte(manifests), newOptions(nil).compact())
	if len(problems) > 0 || len(objs) != 2 {
		t.Fatalf("%d objects, problems %v", len(objs), problems)
	}
	sel := objs[0].obj.(*objects.Service).Spec.Selector["app"]
	label := objs[1].obj.(*objects.EndpointSlice).Service
	if sel != "web-0123" || unsafe.StringData(sel) != unsafe.StringData(label) {
		t.Errorf("selector %q and label %q are not one string", sel, label)
	}
}
