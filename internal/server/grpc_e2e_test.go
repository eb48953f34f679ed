package server_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
)

// proxyYAML is a root proxy for fqdn whose one route splits between the
// services by weight.
func proxyYAML(fqdn string, weights map[string]int) string {
	var svcs []string
	for _, name := range []string{"a", "b", "c"} {
		if w, ok := weights[name]; ok {
			svcs = append(svcs, fmt.Sprintf("{name: %s, port: 80, weight: %d}", name, w))
		}
	}
	return fmt.Sprintf(`apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: app, namespace: shop}
spec:
  virtualhost: {fqdn: %s}
  routes:
  - services: [%s]
`, fqdn, strings.Join(svcs, ", "))
}

// weightedSetup starts three services: a with one backend in each of two
// zones, b and c with one each, behind a 60/30/10 route.
func weightedSetup(t *testing.T) (dir string, serviceOf map[string]string, ids []string) {
	t.Helper()
	dir = t.TempDir()
	a1, a2, b, c := grpcpeer.StartBackend(t, "a1"), grpcpeer.StartBackend(t, "a2"), grpcpeer.StartBackend(t, "b"), grpcpeer.StartBackend(t, "c")
	writeFile(t, dir, "a.yaml", serviceYAML("shop", "a", endpoint{a1, "z1"}, endpoint{a2, "z2"}))
	writeFile(t, dir, "b.yaml", serviceYAML("shop", "b", endpoint{b, "z1"}))
	writeFile(t, dir, "c.yaml", serviceYAML("shop", "c", endpoint{c, "z2"}))
	writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", map[string]int{"a": 60, "b": 30, "c": 10}))
	return dir, map[string]string{"a1": "a", "a2": "a", "b": "b", "c": "c"}, []string{"a1", "a2", "b", "c"}
}

func checkShares(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for svc, w := range want {
		if math.Abs(got[svc]-w) > 5 {
			t.Errorf("service %s got %.1f%% of the RPCs, want %.0f%% ± 5 (all: %v)", svc, got[svc], w, got)
		}
	}
}

// TestGRPCWeightedSplit serves one route over three weighted Services to
// gRPC's own xDS client: one cluster whose localities carry the weights.
func TestGRPCWeightedSplit(t *testing.T) {
	dir, serviceOf, ids := weightedSetup(t)
	s := controlPlane(t, dir)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, ids...)
	counts, failed := tally(context.Background(), c, 3000)
	if failed > 0 {
		t.Fatalf("%d RPCs failed", failed)
	}
	got := shares(counts, serviceOf)
	t.Logf("split over 3000 RPCs: a %.1f%%, b %.1f%%, c %.1f%% (backends %v)", got["a"], got["b"], got["c"], counts)
	checkShares(t, got, map[string]float64{"a": 60, "b": 30, "c": 10})
	noNACKs(t, s)
}

// TestGRPCServiceLosesEndpoints empties one Service's EndpointSlice: its
// share must go to the others and, once the update arrived, no RPC fails.
func TestGRPCServiceLosesEndpoints(t *testing.T) {
	dir, serviceOf, ids := weightedSetup(t)
	s := controlPlane(t, dir)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, ids...)

	before := metric(t, s, `switchyard_builds_total{kind="full"`)
	writeFile(t, dir, "b.yaml", serviceYAML("shop", "b"))
	waitFor(t, 10*time.Second, "b to stop answering", func() bool {
		counts, _ := tally(context.Background(), c, 50)
		return counts["b"] == 0
	})
	if after := metric(t, s, `switchyard_builds_total{kind="full"`); after != before {
		t.Errorf("an EndpointSlice change must not rebuild the DAG: %q -> %q", before, after)
	}
	if m := metric(t, s, `switchyard_builds_total{kind="endpoints"`); m == "" {
		t.Error("the endpoint change did not take the endpoint path")
	}
	counts, failed := tally(context.Background(), c, 1000)
	if failed > 0 {
		t.Fatalf("%d RPCs failed after the update", failed)
	}
	got := shares(counts, serviceOf)
	t.Logf("split with b empty: a %.1f%%, c %.1f%%", got["a"], got["c"])
	checkShares(t, got, map[string]float64{"a": 100 * 60.0 / 70, "b": 0, "c": 100 * 10.0 / 70})
}

// TestGRPCHeaderRoute sends RPCs carrying a header to their own backend.
func TestGRPCHeaderRoute(t *testing.T) {
	dir := t.TempDir()
	stable, canary := grpcpeer.StartBackend(t, "stable"), grpcpeer.StartBackend(t, "canary")
	writeFile(t, dir, "stable.yaml", serviceYAML("shop", "stable", endpoint{stable, "z1"}))
	writeFile(t, dir, "canary.yaml", serviceYAML("shop", "canary", endpoint{canary, "z1"}))
	writeFile(t, dir, "proxy.yaml", `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: app, namespace: shop}
spec:
  virtualhost: {fqdn: app.example.com}
  routes:
  - conditions: [{header: {name: x-canary, exact: "1"}}]
    services: [{name: canary, port: 80}]
  - services: [{name: stable, port: 80}]
`)
	s := controlPlane(t, dir)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, "stable")
	withHeader := metadata.AppendToOutgoingContext(context.Background(), "x-canary", "1")
	canaryCounts, failed := tally(withHeader, c, 200)
	stableCounts, failed2 := tally(context.Background(), c, 200)
	if failed+failed2 > 0 {
		t.Fatalf("%d RPCs failed", failed+failed2)
	}
	if canaryCounts["canary"] != 200 || stableCounts["stable"] != 200 {
		t.Fatalf("with header: %v, without: %v", canaryCounts, stableCounts)
	}
}

// TestGRPCEditWhileRunning edits the route while RPCs flow: once the edit
// reached the client the new split must be in effect, and no RPC may fail
// during the change.
func TestGRPCEditWhileRunning(t *testing.T) {
	dir, serviceOf, ids := weightedSetup(t)
	s := controlPlane(t, dir)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, ids...)
	loop := startLoop(c)

	writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", map[string]int{"a": 10, "b": 30, "c": 60}))
	// c goes from 10% to 60%: 40% of 200 calls is out of reach of the old
	// split, so a batch that gets there was served by the new one.
	failed := 0
	waitFor(t, 30*time.Second, "the edit to reach the client", func() bool {
		counts, f := tally(context.Background(), c, 200)
		failed += f
		return shares(counts, serviceOf)["c"] >= 40
	})
	counts, f := tally(context.Background(), c, 2000)
	failed += f
	if errs := loop.finish(); len(errs)+failed > 0 {
		t.Fatalf("%d RPCs failed during the change (first: %v)", len(errs)+failed, append(errs, nil)[0])
	}
	got := shares(counts, serviceOf)
	t.Logf("split once the edit arrived: a %.1f%%, b %.1f%%, c %.1f%%", got["a"], got["b"], got["c"])
	checkShares(t, got, map[string]float64{"a": 10, "b": 30, "c": 60})
}

// TestGRPCEditLatency measures how long an edit takes to reach the client:
// from writing the file to the first RPC answered by the new backend.
func TestGRPCEditLatency(t *testing.T) {
	dir := t.TempDir()
	a, c := grpcpeer.StartBackend(t, "a1"), grpcpeer.StartBackend(t, "c")
	writeFile(t, dir, "a.yaml", serviceYAML("shop", "a", endpoint{a, "z1"}))
	writeFile(t, dir, "c.yaml", serviceYAML("shop", "c", endpoint{c, "z1"}))
	writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", map[string]int{"a": 1}))
	s := controlPlane(t, dir)
	cl := grpcClient(t, s, "app.example.com")
	warmUp(t, cl, "a1")
	var worst time.Duration
	for i := 0; i < 5; i++ {
		loop := startLoop(cl)
		to, want := map[string]int{"c": 1}, "c"
		if i%2 == 1 {
			to, want = map[string]int{"a": 1}, "a1"
		}
		start := time.Now()
		writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", to))
		waitFor(t, 30*time.Second, "the edit to reach the client", func() bool { return !loop.firstSeen(want).IsZero() })
		if d := loop.firstSeen(want).Sub(start); d > worst {
			worst = d
		}
		if errs := loop.finish(); len(errs) > 0 {
			t.Fatalf("%d RPCs failed during the edit: %v", len(errs), errs[0])
		}
	}
	t.Logf("edit to first RPC on the new backend: worst of 5 %v (holdoff 20ms)", worst)
}
