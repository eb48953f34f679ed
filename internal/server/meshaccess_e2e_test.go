package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// meshPodYAML is a Pod of shop running as a ServiceAccount at one IP:
// what the mesh reads to tell who calls.
func meshPodYAML(name, app, serviceAccount, ip string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: shop, labels: {app: %s}}
spec:
  serviceAccountName: %s
  containers: [{name: app, image: app}]
status:
  podIPs: [{ip: %q}]
`, name, app, serviceAccount, ip)
}

// targetYAML lets the given ServiceAccounts call the pods running as
// reviews.
func targetYAML(sources ...string) string {
	var sb strings.Builder
	sb.WriteString(`apiVersion: access.smi-spec.io/v1alpha3
kind: TrafficTarget
metadata: {name: reviews, namespace: shop}
spec:
  destination: {kind: ServiceAccount, name: reviews}
  sources:
`)
	for _, s := range sources {
		fmt.Fprintf(&sb, "  - {kind: ServiceAccount, name: %s}\n", s)
	}
	return sb.String()
}

// TestMeshTrafficTargetGRPC calls a mesh Service as two proxyless gRPC
// clients, one from 127.0.0.1 (the pod IP of productpage) and one from
// 127.0.0.2 (the pod IP of other), while the Service's backend, an
// xDS-enabled gRPC server, enforces the TrafficTarget on its server
// listener. productpage is allowed throughout and never sees a failed
// RPC while the target lets other in, leaves it out again, and goes away
// (the Service is then open to everyone). Then the target gets a rule:
// productpage may call what an HTTPRouteGroup's match names, UnaryCall
// and then only EmptyCall, which denies its UnaryCalls.
func TestMeshTrafficTargetGRPC(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ns.yaml", meshNamespaceYAML)
	writeFile(t, dir, "pods.yaml", strings.Join([]string{
		meshPodYAML("reviews-1", "reviews", "reviews", "127.0.0.9"),
		meshPodYAML("productpage-1", "productpage", "productpage", "127.0.0.1"),
		meshPodYAML("other-1", "other", "other", "127.0.0.2"),
	}, "---\n"))
	writeFile(t, dir, "target.yaml", targetYAML("productpage"))
	// The Service selects its pods, whose ServiceAccount is the target's
	// destination (serviceYAML writes no selector). It has its server
	// listener before its backend, which serves only once it has one.
	reviews := func(eps ...endpoint) string {
		return strings.Replace(serviceYAML("shop", "reviews", eps...), "spec:\n", "spec:\n  selector: {app: reviews}\n", 1)
	}
	writeFile(t, dir, "reviews.yaml", reviews())
	s := meshControlPlane(t, dir)
	b := startXDSBackend(t, s.XDSAddr(), "reviews.shop", "r1")
	writeFile(t, dir, "reviews.yaml", reviews(endpoint{b, "z1"}))

	allowed := grpcClient(t, s, "reviews.shop")
	other := grpcClientAt(t, s.XDSAddr(), "reviews.shop", fromAddress("127.0.0.2"))
	warmUp(t, allowed, "r1")
	waitForCode(t, other, codes.PermissionDenied, "other (127.0.0.2) under a target of productpage only")

	loop := startLoop(allowed)
	writeFile(t, dir, "target.yaml", targetYAML("productpage", "other"))
	waitForCode(t, other, codes.OK, "other once the target names it")
	writeFile(t, dir, "target.yaml", targetYAML("productpage"))
	waitForCode(t, other, codes.PermissionDenied, "other once the target names only productpage again")
	if err := os.Remove(filepath.Join(dir, "target.yaml")); err != nil {
		t.Fatal(err)
	}
	waitForCode(t, other, codes.OK, "other once no target names reviews (open, as SMI says)")
	if errs := loop.finish(); len(errs) > 0 {
		t.Fatalf("%d RPCs of productpage failed while the target changed (first: %v)", len(errs), errs[0])
	}
	if id, err := call(context.Background(), allowed); err != nil || id != "r1" {
		t.Fatalf("productpage after the changes: %q, %v", id, err)
	}

	// Rules: productpage may make the requests an HTTPRouteGroup's match
	// names, by path and method, and no others.
	writeFile(t, dir, "target.yaml", targetYAML("productpage")+rulesYAML)
	writeFile(t, dir, "routes.yaml", routeGroupYAML("/grpc\\.testing\\.TestService/UnaryCall"))
	waitForCode(t, other, codes.PermissionDenied, "other under a target with rules")
	waitForCode(t, allowed, codes.OK, "productpage's UnaryCall, which the rule's match names")
	writeFile(t, dir, "routes.yaml", routeGroupYAML("/grpc\\.testing\\.TestService/EmptyCall"))
	waitForCode(t, allowed, codes.PermissionDenied, "productpage's UnaryCall once the match names only EmptyCall")
	noNACKs(t, s)
}

// rulesYAML restricts targetYAML's target to the match calls of the
// HTTPRouteGroup rpcs.
const rulesYAML = `  rules:
  - {kind: HTTPRouteGroup, name: rpcs, matches: [calls]}
`

// routeGroupYAML is the HTTPRouteGroup rpcs, whose match calls is POSTs
// to paths matching pathRegex.
func routeGroupYAML(pathRegex string) string {
	return fmt.Sprintf(`apiVersion: specs.smi-spec.io/v1alpha4
kind: HTTPRouteGroup
metadata: {name: rpcs, namespace: shop}
spec:
  matches:
  - {name: calls, pathRegex: %q, methods: [POST]}
`, pathRegex)
}
