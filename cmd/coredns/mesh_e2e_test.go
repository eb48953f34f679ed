package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/translator"
)

// meshZone is the mesh's DNS zone; meshCorefile is the server block an
// operator adds for it (examples/mesh/Corefile), with the plugin pointed
// at the control plane.
const (
	meshZone     = "mesh.local."
	meshCorefile = `mesh.local:0 {
    bind 127.0.0.1
    errors
    switchyard grpc://{{XDS}} {
        node mesh-dns
    }
}
`
)

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
	d := startCoreDNS(t, meshCorefile, s)
	c := d.client(t)
	name := "reviews.shop." + meshZone
	waitAnswered(t, c, name)
	waitApplied(t, c, s, meshZone)

	counts := d.split(t, name, 4000)
	t.Logf("%s over 4000 queries: %s", name, sortedCounts(counts))
	checkShares(t, counts, map[int]float64{1: 0.7, 2: 0.3})

	s.change(t, func() { writeFile(t, s.dir, "v2.yaml", meshService("reviews-v2")) })
	start := time.Now()
	waitApplied(t, c, s, meshZone)
	t.Logf("reviews-v2 emptied: applied after %v", time.Since(start).Round(time.Millisecond))
	counts = d.split(t, name, 1000)
	checkShares(t, counts, map[int]float64{1: 1, 2: 0})
}
