package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/server"
)

// meshNamespaceYAML puts every Service of shop in the mesh.
const meshNamespaceYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations: {switchyard.dev/mesh: "true"}
`

// splitYAML is a TrafficSplit of the Service reviews between a and b.
func splitYAML(a, b int) string {
	return fmt.Sprintf(`apiVersion: split.smi-spec.io/v1alpha4
kind: TrafficSplit
metadata: {name: reviews, namespace: shop}
spec:
  service: reviews
  backends:
  - {service: a, weight: %d}
  - {service: b, weight: %d}
`, a, b)
}

// meshSetup starts a (two backends, two zones) and b (one), the root
// Service reviews without endpoints of its own, and a 70/30 split of it.
func meshSetup(t *testing.T) (dir string, serviceOf map[string]string, ids []string) {
	t.Helper()
	dir = t.TempDir()
	a1, a2, b := grpcpeer.StartBackend(t, "a1"), grpcpeer.StartBackend(t, "a2"), grpcpeer.StartBackend(t, "b")
	writeFile(t, dir, "ns.yaml", meshNamespaceYAML)
	writeFile(t, dir, "reviews.yaml", serviceYAML("shop", "reviews"))
	writeFile(t, dir, "a.yaml", serviceYAML("shop", "a", endpoint{a1, "z1"}, endpoint{a2, "z2"}))
	writeFile(t, dir, "b.yaml", serviceYAML("shop", "b", endpoint{b, "z1"}))
	writeFile(t, dir, "split.yaml", splitYAML(70, 30))
	return dir, map[string]string{"a1": "a", "a2": "a", "b": "b"}, []string{"a1", "a2", "b"}
}

func meshControlPlane(t *testing.T, dir string) *server.Server {
	t.Helper()
	return startServer(t, dir, "127.0.0.1:0", func(c *server.Config) {
		c.AdminAddress = "127.0.0.1:0"
		c.Pipeline.DAG.Mesh = true
	}).Server
}

// TestMeshSplitGRPC dials the root Service of a TrafficSplit as a
// proxyless client, with and without the port: the split's weights are
// what the RPCs measure.
func TestMeshSplitGRPC(t *testing.T) {
	dir, serviceOf, ids := meshSetup(t)
	s := meshControlPlane(t, dir)
	for _, target := range []string{"reviews.shop", "reviews.shop:80"} {
		c := grpcClient(t, s, target)
		warmUp(t, c, ids...)
		counts, failed := tally(context.Background(), c, 3000)
		if failed > 0 {
			t.Fatalf("%s: %d RPCs failed", target, failed)
		}
		got := shares(counts, serviceOf)
		t.Logf("xds:///%s over 3000 RPCs: a %.1f%%, b %.1f%% (backends %v)", target, got["a"], got["b"], counts)
		checkShares(t, got, map[string]float64{"a": 70, "b": 30})
	}
	noNACKs(t, s)
}

// TestMeshBackendEmptied empties one backend of the split while RPCs
// flow: its share goes to the other and no RPC fails.
func TestMeshBackendEmptied(t *testing.T) {
	dir, serviceOf, ids := meshSetup(t)
	s := meshControlPlane(t, dir)
	c := grpcClient(t, s, "reviews.shop")
	warmUp(t, c, ids...)
	loop := startLoop(c)
	writeFile(t, dir, "b.yaml", serviceYAML("shop", "b"))
	waitFor(t, 10*time.Second, "b to stop answering", func() bool {
		counts, _ := tally(context.Background(), c, 50)
		return counts["b"] == 0
	})
	counts, failed := tally(context.Background(), c, 1000)
	if errs := loop.finish(); len(errs)+failed > 0 {
		t.Fatalf("%d RPCs failed while b emptied (first: %v)", len(errs)+failed, append(errs, nil)[0])
	}
	got := shares(counts, serviceOf)
	t.Logf("split with b empty: a %.1f%%, b %.1f%%", got["a"], got["b"])
	checkShares(t, got, map[string]float64{"a": 100, "b": 0})
}

// TestMeshSplitEdit changes the weights while RPCs flow.
func TestMeshSplitEdit(t *testing.T) {
	dir, serviceOf, ids := meshSetup(t)
	s := meshControlPlane(t, dir)
	c := grpcClient(t, s, "reviews.shop")
	warmUp(t, c, ids...)
	loop := startLoop(c)
	writeFile(t, dir, "split.yaml", splitYAML(10, 90))
	var failed int
	waitFor(t, 30*time.Second, "the edit to reach the client", func() bool {
		counts, f := tally(context.Background(), c, 200)
		failed += f
		return shares(counts, serviceOf)["b"] >= 65
	})
	counts, f := tally(context.Background(), c, 2000)
	failed += f
	if errs := loop.finish(); len(errs)+failed > 0 {
		t.Fatalf("%d RPCs failed during the change (first: %v)", len(errs)+failed, append(errs, nil)[0])
	}
	got := shares(counts, serviceOf)
	t.Logf("split once the edit arrived: a %.1f%%, b %.1f%%", got["a"], got["b"])
	checkShares(t, got, map[string]float64{"a": 10, "b": 90})
}

// TestMeshSplitStatusShown serves a split with a missing backend: the
// admin endpoint (/debug/xds) and the console (/api/objects) show its
// status, naming the field, and once the backend exists both say valid.
func TestMeshSplitStatusShown(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ns.yaml", meshNamespaceYAML)
	writeFile(t, dir, "reviews.yaml", serviceYAML("shop", "reviews"))
	writeFile(t, dir, "a.yaml", serviceYAML("shop", "a"))
	writeFile(t, dir, "split.yaml", splitYAML(70, 30))
	s := meshControlPlane(t, dir)
	want := "spec.backends[1].service: Service shop/b not found"
	waitFor(t, 10*time.Second, "the split's status to name the missing backend", func() bool {
		st, ok := splitStatus(t, s)
		return ok && st.CurrentStatus == "invalid" && len(st.Errors) == 1 && st.Errors[0].Reason == "ServiceNotFound" && st.Errors[0].Message == want
	})
	row := consoleSplit(t, s)
	if row.State != "invalid" || len(row.Errors) != 1 || row.Errors[0].Message != want {
		t.Fatalf("the console shows the split as %+v, want invalid: %s", row, want)
	}
	writeFile(t, dir, "b.yaml", serviceYAML("shop", "b"))
	waitFor(t, 10*time.Second, "the split to be valid", func() bool {
		st, ok := splitStatus(t, s)
		return ok && st.CurrentStatus == "valid"
	})
	if row := consoleSplit(t, s); row.State != "valid" || len(row.Errors) != 0 {
		t.Fatalf("the console shows the fixed split as %+v", row)
	}
}

// splitStatus is the status of TrafficSplit shop/reviews in /debug/xds.
func splitStatus(t *testing.T, s *server.Server) (proxyState, bool) {
	t.Helper()
	var doc struct{ Statuses []proxyState }
	getJSON(t, s, "/debug/xds?group=grpc&format=json", &doc)
	for _, st := range doc.Statuses {
		if st.Kind == "TrafficSplit" && st.Namespace == "shop" && st.Name == "reviews" {
			return st, true
		}
	}
	return proxyState{}, false
}

type consoleRow struct {
	State  string
	Errors []struct{ Reason, Message string }
}

// consoleSplit is the console's row of TrafficSplit shop/reviews.
func consoleSplit(t *testing.T, s *server.Server) consoleRow {
	t.Helper()
	var doc struct{ Items []consoleRow }
	getJSON(t, s, "/api/objects?kind=TrafficSplit&namespace=shop&q=reviews", &doc)
	if len(doc.Items) != 1 {
		t.Fatalf("the console lists %d TrafficSplits shop/reviews, want 1", len(doc.Items))
	}
	return doc.Items[0]
}

func getJSON(t *testing.T, s *server.Server, path string, into any) {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
