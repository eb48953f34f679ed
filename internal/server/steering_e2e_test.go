package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// The steering tests run `switchyard serve` in process over a directory of
// manifests and gRPC's own xDS client against real backends: a route
// whose primary Service (priority 0) has a standby (priority 1), steered
// by editing the manifests as an operator would — emptying the primary's
// EndpointSlices, marking an endpoint terminating, annotating a Node or the
// Service with switchyard.dev/drain, or starting serve with --drain-zone.
// Each step logs how long the write took to reach the client.

// nodeYAML is a Node, drained or not.
func nodeYAML(name string, drained bool) string {
	if drained {
		return fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  annotations: {switchyard.dev/drain: \"true\"}\n", name)
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n", name)
}

// standbyProxyYAML routes app.example.com to Service primary, with
// standby as priority 1.
const standbyProxyYAML = `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: app, namespace: shop}
spec:
  virtualhost: {fqdn: app.example.com}
  routes:
  - services:
    - {name: primary, port: 80}
    - {name: standby, port: 80, priority: 1}
`

// standbySetup is a primary Service with two backends (zone z1 on node n1,
// zone z2 on node n2) and a standby with two (zone z2 on n2, zone z3 on
// n3), behind standbyProxyYAML.
type standbySetup struct {
	dir                    string
	p1, p2, s1, s2         steered
	primaryIDs, standbyIDs []string
}

func newStandbySetup(t *testing.T) *standbySetup {
	t.Helper()
	st := &standbySetup{
		dir:        t.TempDir(),
		p1:         steered{b: grpcpeer.StartBackend(t, "p1"), zone: "z1", node: "n1"},
		p2:         steered{b: grpcpeer.StartBackend(t, "p2"), zone: "z2", node: "n2"},
		s1:         steered{b: grpcpeer.StartBackend(t, "s1"), zone: "z2", node: "n2"},
		s2:         steered{b: grpcpeer.StartBackend(t, "s2"), zone: "z3", node: "n3"},
		primaryIDs: []string{"p1", "p2"},
		standbyIDs: []string{"s1", "s2"},
	}
	st.writePrimary(t, false, st.p1, st.p2)
	writeFile(t, st.dir, "standby.yaml", steeredServiceYAML("shop", "standby", false, st.s1, st.s2))
	for _, n := range []string{"n1", "n2", "n3"} {
		writeFile(t, st.dir, "node-"+n+".yaml", nodeYAML(n, false))
	}
	writeFile(t, st.dir, "proxy.yaml", standbyProxyYAML)
	return st
}

func (st *standbySetup) writePrimary(t *testing.T, drained bool, eps ...steered) {
	t.Helper()
	writeFile(t, st.dir, "primary.yaml", steeredServiceYAML("shop", "primary", drained, eps...))
}

// steer applies one change while RPCs flow and waits until the answers
// converge: no RPC in a row of 100 goes to a backend of gone, and one has
// gone to a backend of toward. It returns the loop, stopped, and when the
// change was written.
func steer(t *testing.T, c testgrpc.TestServiceClient, change func(), gone, toward []string) (*rpcLoop, time.Time) {
	t.Helper()
	loop := startLoop(c)
	start := time.Now()
	change()
	waitFor(t, 10*time.Second, fmt.Sprintf("RPCs to leave %v", gone), func() bool {
		counts, _ := tally(context.Background(), c, 100)
		for _, id := range gone {
			if counts[id] > 0 {
				return false
			}
		}
		return slices.ContainsFunc(toward, func(id string) bool { return !loop.firstSeen(id).IsZero() })
	})
	if errs := loop.finish(); len(errs) > 0 {
		t.Errorf("%d RPCs failed while the change converged (first: %v)", len(errs), errs[0])
	}
	return loop, start
}

// firstOf is the earliest first answer of any of ids after start.
func firstOf(l *rpcLoop, start time.Time, ids []string) time.Duration {
	var first time.Time
	for _, id := range ids {
		if t := l.firstSeen(id); !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first.Sub(start)
}

// lastOf is the latest last answer of any of ids, after start (0 when
// none answered after start).
func lastOf(l *rpcLoop, start time.Time, ids []string) time.Duration {
	var last time.Time
	for _, id := range ids {
		if t := l.lastSeen(id); t.After(last) {
			last = t
		}
	}
	if last.Before(start) {
		return 0
	}
	return last.Sub(start)
}

// onlyTo makes n RPCs and fails the test unless every one succeeds and is
// answered by one of ids.
func onlyTo(t *testing.T, c testgrpc.TestServiceClient, n int, ids ...string) map[string]int {
	t.Helper()
	counts, failed := tally(context.Background(), c, n)
	if failed > 0 {
		t.Errorf("%d of %d RPCs failed", failed, n)
	}
	for id, k := range counts {
		if !slices.Contains(ids, id) {
			t.Errorf("%d of %d RPCs went to %s, want only %v (all: %v)", k, n, id, ids, counts)
		}
	}
	return counts
}

// endpointGauges returns the switchyard_endpoints lines of the clusters
// whose name starts with clusterPrefix, without the metric name and the
// cluster label: `health="healthy",priority="0"} 2`.
func endpointGauges(t *testing.T, s *server.Server, clusterPrefix string) []string {
	t.Helper()
	var out []string
	prefix := `switchyard_endpoints{cluster="` + clusterPrefix
	for _, line := range metricLines(t, s) {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			_, labels, _ := strings.Cut(rest, `",`)
			out = append(out, labels)
		}
	}
	return out
}

// checkGauges waits until the endpoint metric of the route's cluster reads
// want (the metric reads the cache, which the client may have seen first).
func checkGauges(t *testing.T, s *server.Server, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		got = endpointGauges(t, s, "shop/primary/80+1/")
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("switchyard_endpoints of the route's cluster:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGRPCPriorityFailover fails over to the standby when the primary
// loses its last endpoint, and back when it returns: with the primary
// healthy the standby gets no RPC; once the update arrived every RPC goes
// to the standby and none fails; restored, every RPC returns.
func TestGRPCPriorityFailover(t *testing.T) {
	st := newStandbySetup(t)
	s := controlPlane(t, st.dir)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, st.primaryIDs...)
	counts := onlyTo(t, c, 1000, st.primaryIDs...)
	t.Logf("primary healthy: %v over 1000 RPCs", counts)
	checkGauges(t, s,
		`health="healthy",priority="0"} 2`, `health="draining",priority="0"} 0`,
		`health="healthy",priority="1"} 2`, `health="draining",priority="1"} 0`)

	// Empty the primary's EndpointSlices.
	loop, start := steer(t, c, func() { st.writePrimary(t, false) }, st.primaryIDs, st.standbyIDs)
	failover := firstOf(loop, start, st.standbyIDs)
	counts = onlyTo(t, c, 1000, st.standbyIDs...)
	t.Logf("primary emptied: first RPC on the standby %v after the write; then %v over 1000 RPCs", failover, counts)
	checkGauges(t, s,
		`health="healthy",priority="0"} 0`, `health="draining",priority="0"} 0`,
		`health="healthy",priority="1"} 2`, `health="draining",priority="1"} 0`)

	// Restore it.
	loop, start = steer(t, c, func() { st.writePrimary(t, false, st.p1, st.p2) }, st.standbyIDs, st.primaryIDs)
	back := firstOf(loop, start, st.primaryIDs)
	counts = onlyTo(t, c, 1000, st.primaryIDs...)
	t.Logf("primary restored: first RPC on the primary %v after the write; then %v over 1000 RPCs", back, counts)
	t.Logf("gRPC failover %v, return %v (write to first RPC on the other side; holdoff 20ms)", failover, back)
	// The emptied primary must have kept its priority level (an empty
	// locality), or gRPC would NACK the load assignment for skipping
	// priority 0.
	noNACKs(t, s)
}

// TestGRPCDrain drains, one after the other, a terminating endpoint, a
// Node and the whole primary Service. Drained endpoints stop getting RPCs;
// draining part of the primary never spills to the standby (DRAINING
// endpoints leave the health ratio, they do not count as unhealthy);
// draining all of it fails over, and undraining returns.
func TestGRPCDrain(t *testing.T) {
	st := newStandbySetup(t)
	s := controlPlane(t, st.dir)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, st.primaryIDs...)

	// p1 terminating but still serving.
	terminating := st.p1
	terminating.terminating = true
	loop, start := steer(t, c, func() { st.writePrimary(t, false, terminating, st.p2) }, []string{"p1"}, []string{"p2"})
	drainEndpoint := lastOf(loop, start, []string{"p1"})
	onlyTo(t, c, 500, "p2")
	checkGauges(t, s,
		`health="healthy",priority="0"} 1`, `health="draining",priority="0"} 1`,
		`health="healthy",priority="1"} 2`, `health="draining",priority="1"} 0`)
	t.Logf("terminating endpoint: last RPC on it %v after the write", drainEndpoint)

	// p1 ready again, Node n2 (p2 and the standby's s1) drained.
	st.writePrimary(t, false, st.p1, st.p2)
	warmUp(t, c, "p1", "p2")
	loop, start = steer(t, c, func() { writeFile(t, st.dir, "node-n2.yaml", nodeYAML("n2", true)) }, []string{"p2"}, []string{"p1"})
	drainNode := lastOf(loop, start, []string{"p2"})
	onlyTo(t, c, 500, "p1")
	checkGauges(t, s,
		`health="healthy",priority="0"} 1`, `health="draining",priority="0"} 1`,
		`health="healthy",priority="1"} 1`, `health="draining",priority="1"} 1`)
	t.Logf("drained Node: last RPC on its endpoint %v after the write", drainNode)

	// Node back, the primary Service drained: the standby takes over.
	writeFile(t, st.dir, "node-n2.yaml", nodeYAML("n2", false))
	warmUp(t, c, "p1", "p2")
	loop, start = steer(t, c, func() { st.writePrimary(t, true, st.p1, st.p2) }, st.primaryIDs, st.standbyIDs)
	drainService := firstOf(loop, start, st.standbyIDs)
	onlyTo(t, c, 1000, st.standbyIDs...)
	checkGauges(t, s,
		`health="healthy",priority="0"} 0`, `health="draining",priority="0"} 2`,
		`health="healthy",priority="1"} 2`, `health="draining",priority="1"} 0`)
	t.Logf("drained Service: first RPC on the standby %v after the write", drainService)

	// Undrained: back to the primary.
	loop, start = steer(t, c, func() { st.writePrimary(t, false, st.p1, st.p2) }, st.standbyIDs, st.primaryIDs)
	undrain := firstOf(loop, start, st.primaryIDs)
	onlyTo(t, c, 1000, st.primaryIDs...)
	t.Logf("gRPC drain: endpoint %v, Node %v (write to last RPC on it); Service failover %v, undrain return %v (write to first RPC on the other side)",
		drainEndpoint, drainNode, drainService, undrain)
	noNACKs(t, s)
}

// TestGRPCDrainZone serves with --drain-zone z2: the client never picks an
// endpoint in z2, at any priority — neither the primary's p2 nor, after
// failover, the standby's s1.
func TestGRPCDrainZone(t *testing.T) {
	st := newStandbySetup(t)
	opts := translator.DefaultOptions()
	opts.DrainZones = []string{"z2"}
	s := controlPlaneWith(t, st.dir, opts)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, "p1")
	onlyTo(t, c, 1000, "p1")
	checkGauges(t, s,
		`health="healthy",priority="0"} 1`, `health="draining",priority="0"} 1`,
		`health="healthy",priority="1"} 1`, `health="draining",priority="1"} 1`)

	steer(t, c, func() { st.writePrimary(t, false) }, st.primaryIDs, []string{"s2"})
	onlyTo(t, c, 1000, "s2")
	noNACKs(t, s)
}
