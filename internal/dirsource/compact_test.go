package dirsource

import (
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
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
	objs, problems := decodeFile("c.yaml", []byte(manifests))
	if len(problems) > 0 || len(objs) != 3 {
		t.Fatalf("%d objects, problems %v", len(objs), problems)
	}
	svc := objs[0].obj.(*corev1.Service)
	// The selector stays: the mesh reads it to find a Service's pods.
	if svc.Spec.Selector["app"] != "web" || svc.ManagedFields != nil || len(svc.Annotations) != 1 || svc.Annotations["keep"] != "me" {
		t.Errorf("selector %v, managedFields %v, annotations %v: want app=web, none, keep only", svc.Spec.Selector, svc.ManagedFields, svc.Annotations)
	}
	a, b := objs[1].obj.(*discoveryv1.EndpointSlice), objs[2].obj.(*discoveryv1.EndpointSlice)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if !same(*a.Endpoints[0].Zone, *b.Endpoints[0].Zone) || !same(a.Namespace, b.Namespace) || !same(a.APIVersion, b.APIVersion) {
		t.Error("zone, namespace and apiVersion are not shared between the slices")
	}
	if a.Endpoints[0].Conditions.Ready != b.Endpoints[0].Conditions.Ready || !*a.Endpoints[0].Conditions.Ready {
		t.Error("ready condition is not one shared true")
	}
}
