package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/translator"
)

// meshZone is the mesh's DNS zone.
const meshZone = "mesh.local."

// meshCorefile is examples/mesh/Corefile, the server block an operator
// adds for the mesh zone, on a loopback port and pointed at the control
// plane under test.
func meshCorefile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/mesh/Corefile")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "mesh.local {", "mesh.local:0 {\n    bind 127.0.0.1", 1)
	s = strings.Replace(s, "switchyard.switchyard.svc:8001", "{{XDS}}", 1)
	if !strings.Contains(s, "{{XDS}}") || !strings.Contains(s, "bind 127.0.0.1") {
		t.Fatalf("examples/mesh/Corefile no longer has the shape this test expects:\n%s", b)
	}
	return s
}

// meshService is a Service of the mesh namespace shop with one
// EndpointSlice holding addrs.
func meshService(name string, addrs ...string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: shop}\nspec:\n  ports: [{name: http, port: 80}]\n", name)
	if len(addrs) > 0 {
		fmt.Fprintf(&sb, "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: %s-1\n  namespace: shop\n  labels: {kubernetes.io/service-name: %s}\naddressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints:\n", name, name)
		for _, a := range addrs {
			fmt.Fprintf(&sb, "- addresses: [%q]\n  conditions: {ready: true}\n  zone: z1\n", a)
		}
	}
	return sb.String()
}

// TestMeshSplitDNS answers the root Service of a 70/30 TrafficSplit below
// the mesh zone through real CoreDNS with `switchyard serve --mesh`: the
// answers follow the split's weights, and a backend emptied gives its
// share to the other.
func TestMeshSplitDNS(t *testing.T) {
	s := &serveControlPlane{opts: translator.DefaultOptions(), dir: t.TempDir(), mesh: true}
	s.start(t, "127.0.0.1:0")
	t.Cleanup(func() { s.stop(t) })
	s.change(t, func() {
		writeFile(t, s.dir, "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  annotations: {switchyard.dev/mesh: \"true\"}\n")
		writeFile(t, s.dir, "reviews.yaml", meshService("reviews"))
		writeFile(t, s.dir, "v1.yaml", meshService("reviews-v1", "10.1.0.1", "10.1.0.2"))
		writeFile(t, s.dir, "v2.yaml", meshService("reviews-v2", "10.2.0.1"))
		writeFile(t, s.dir, "split.yaml", `apiVersion: split.smi-spec.io/v1alpha4
kind: TrafficSplit
metadata: {name: reviews, namespace: shop}
spec:
  service: reviews
  backends:
  - {service: reviews-v1, weight: 70}
  - {service: reviews-v2, weight: 30}
`)
	})
	d := startCoreDNS(t, meshCorefile(t), s)
	c := d.client(t)
	name := "reviews.shop." + meshZone
	waitAnswered(t, c, name)
	waitApplied(t, c, s, meshZone)

	counts := d.split(t, name, 4000)
	t.Logf("%s over 4000 queries: %s", name, sortedCounts(counts))
	checkShares(t, counts, map[int]float64{1: 0.7, 2: 0.3})

	s.change(t, func() { writeFile(t, s.dir, "v2.yaml", meshService("reviews-v2")) })
	waitApplied(t, c, s, meshZone)
	counts = d.split(t, name, 1000)
	checkShares(t, counts, map[int]float64{1: 1, 2: 0})
}
