package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/translator"
)

// The steering tests drive `switchyard serve` the way an operator would —
// by editing manifests: an EndpointSlice endpoint turns terminating, a
// Node gets switchyard.dev/drain, a Service gets it, the primary's slice
// empties, serve runs with --drain-zone — and query the plugin. Each step
// checks that what is drained is never answered once the plugin has the
// update, and logs how long each step took from the write.

// TestDrainByService drains a whole Service with the annotation: its
// endpoints are never answered and the standby takes over; removing the
// annotation brings the answers back. Both control planes.
func TestDrainByService(t *testing.T) { eachControlPlane(t, testDrainByService) }

func testDrainByService(t *testing.T, cp controlPlane) {
	web := standbyName()
	d, c := setup(t, cp, web)
	onlyAnswers(t, d, "web.shop", 1000, primaryAddrs...)

	web.services[0].drained = true
	cp.apply(t, web)
	waitApplied(t, c, cp, zone)
	onlyAnswers(t, d, "web.shop", 1000, standbyAddrs...)

	web.services[0].drained = false
	cp.apply(t, web)
	waitApplied(t, c, cp, zone)
	onlyAnswers(t, d, "web.shop", 1000, primaryAddrs...)
}

// primaryAddrs and standbyAddrs are the endpoints of standbyName.
var (
	primaryAddrs = []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"}
	standbyAddrs = []string{"10.2.0.1", "10.2.0.2"}
)

// standbyName is web.shop: Service primary with endpoints in zones a, a
// and b, on nodes n1, n2 and n3, and Service standby (priority 1) in
// zones b and c on nodes n3 and n4.
func standbyName() dnsName {
	return dnsName{name: "web.shop", services: []service{
		{name: "shop/primary", weight: 1, endpoints: []endpoint{
			{addr: "10.1.0.1", zone: "a", node: "n1"},
			{addr: "10.1.0.2", zone: "a", node: "n2"},
			{addr: "10.1.0.3", zone: "b", node: "n3"},
		}},
		{name: "shop/standby", weight: 1, priority: 1, endpoints: []endpoint{
			{addr: "10.2.0.1", zone: "b", node: "n3"},
			{addr: "10.2.0.2", zone: "c", node: "n4"},
		}},
	}}
}

// onlyAnswers sends n A queries for name and fails unless every answer is
// one of addrs; it returns the counts.
func onlyAnswers(t *testing.T, d *coreDNS, name string, n int, addrs ...string) map[string]int {
	t.Helper()
	counts := d.split(t, name+"."+zone, n)
	for a, k := range counts {
		if !slices.Contains(addrs, a) {
			t.Errorf("%s: %d of %d answers were %s, want only %v (all: %s)", name, k, n, a, addrs, sortedCounts(counts))
		}
	}
	return counts
}

// nodeYAML is a Node, drained or not.
func nodeYAML(name string, drained bool) string {
	if drained {
		return fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  annotations: {switchyard.dev/drain: \"true\"}\n", name)
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n", name)
}

// timing is how long one steering step took, from the write of the
// manifest.
type timing struct {
	// served: serve's dns group changed.
	served time.Duration
	// applied: the plugin reports the new EDS version (apex TXT); from
	// then on no answer comes from the old table.
	applied time.Duration
	// answered: the first A answer from the other side, for steps that
	// move traffic (0 otherwise).
	answered time.Duration
}

func (tm timing) String() string {
	s := fmt.Sprintf("served %v, applied by the plugin %v", tm.served.Round(time.Microsecond), tm.applied.Round(time.Microsecond))
	if tm.answered > 0 {
		s += fmt.Sprintf(", first answer on the other side %v", tm.answered.Round(time.Microsecond))
	}
	return s
}

// steerServe runs edit (a write into serve's directory) and times it: until
// serve's dns group changed, until the plugin applied it, and, when toward
// is not empty, until an A query for name is first answered with one of
// toward. It polls all three back to back from the write on.
func steerServe(t *testing.T, cp *serveControlPlane, c *client, name string, toward []string, edit func()) timing {
	t.Helper()
	var tm timing
	before := cp.versions()
	start := time.Now()
	edit()
	deadline := start.Add(30 * time.Second)
	for tm.served == 0 || tm.applied == 0 || (len(toward) > 0 && tm.answered == 0) {
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: %s (0 = not yet); serve versions %s, plugin %q", tm, cp.versions(), c.txt(t, zone))
		}
		if tm.served == 0 && cp.versions() != before {
			tm.served = time.Since(start)
		}
		if tm.served > 0 && tm.applied == 0 && strings.Contains(c.txt(t, zone), " eds_version="+cp.edsVersion()) {
			tm.applied = time.Since(start)
		}
		if len(toward) > 0 && tm.answered == 0 {
			if got := c.a(t, name+"."+zone); len(got) == 1 && slices.Contains(toward, got[0]) {
				tm.answered = time.Since(start)
			}
		}
	}
	return tm
}

// TestServeSteering steers web.shop through serve step by step: a
// terminating endpoint, a drained Node, a drained Service and its return,
// the primary emptied and restored. Drained endpoints are never answered
// once the plugin has the update, draining part of the primary never
// spills to the standby, and the standby takes everything only when the
// primary has no usable endpoint.
func TestServeSteering(t *testing.T) {
	cp := newServeControlPlaneWith(t, translator.DefaultOptions())
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		writeFile(t, cp.dir, "node-"+n+".yaml", nodeYAML(n, false))
	}
	web := standbyName()
	d, c := setup(t, cp, web)
	onlyAnswers(t, d, "web.shop", 2000, primaryAddrs...)
	write := func() { writeFile(t, cp.dir, "web.shop.yaml", manifests(web)) }

	// An endpoint terminating but still serving: DRAINING.
	web.services[0].endpoints[1].state = terminating
	terminated := steerServe(t, cp, c, "web.shop", nil, write)
	counts := onlyAnswers(t, d, "web.shop", 2000, "10.1.0.1", "10.1.0.3")
	t.Logf("10.1.0.2 terminating: %s; then %s", terminated, sortedCounts(counts))

	// It is gone, and Node n3 (10.1.0.3 and the standby's 10.2.0.1) is
	// drained for maintenance: 10.1.0.1 carries the primary alone.
	web.services[0].endpoints = slices.Delete(web.services[0].endpoints, 1, 2)
	steerServe(t, cp, c, "web.shop", nil, write)
	node := steerServe(t, cp, c, "web.shop", nil, func() { writeFile(t, cp.dir, "node-n3.yaml", nodeYAML("n3", true)) })
	counts = onlyAnswers(t, d, "web.shop", 2000, "10.1.0.1")
	t.Logf("Node n3 drained: %s; then %s", node, sortedCounts(counts))

	// The primary Service drained: only the standby's endpoint not on n3.
	web.services[0].drained = true
	service := steerServe(t, cp, c, "web.shop", []string{"10.2.0.2"}, write)
	counts = onlyAnswers(t, d, "web.shop", 2000, "10.2.0.2")
	t.Logf("Service primary drained: %s; then %s", service, sortedCounts(counts))

	// Undrained, Node n3 back: the primary answers again.
	web.services[0].drained = false
	steerServe(t, cp, c, "web.shop", nil, func() { writeFile(t, cp.dir, "node-n3.yaml", nodeYAML("n3", false)) })
	undrained := steerServe(t, cp, c, "web.shop", []string{"10.1.0.1", "10.1.0.3"}, write)
	counts = onlyAnswers(t, d, "web.shop", 2000, "10.1.0.1", "10.1.0.3")
	t.Logf("Service primary undrained: %s; then %s", undrained, sortedCounts(counts))

	// Priority failover: the primary's EndpointSlice emptied, then
	// restored.
	primary := web.services[0].endpoints
	web.services[0].endpoints = nil
	failover := steerServe(t, cp, c, "web.shop", standbyAddrs, write)
	counts = onlyAnswers(t, d, "web.shop", 2000, standbyAddrs...)
	t.Logf("primary emptied: %s; then %s", failover, sortedCounts(counts))
	web.services[0].endpoints = primary
	back := steerServe(t, cp, c, "web.shop", []string{"10.1.0.1", "10.1.0.3"}, write)
	counts = onlyAnswers(t, d, "web.shop", 2000, "10.1.0.1", "10.1.0.3")
	t.Logf("primary restored: %s; then %s", back, sortedCounts(counts))

	t.Logf("DNS through serve, write to plugin applied: terminating %v, Node %v, Service drain %v (first standby answer %v), undrain %v (first primary answer %v), failover %v (first standby answer %v), return %v (first primary answer %v)",
		terminated.applied, node.applied, service.applied, service.answered, undrained.applied, undrained.answered,
		failover.applied, failover.answered, back.applied, back.answered)
}

// TestServeDrainZone runs serve with --drain-zone b: no endpoint in zone
// b is answered, at any priority. An endpoint that moves into zone b is
// drained once the update arrives; when that leaves the primary without a
// usable endpoint, the standby takes over — on its endpoints outside zone
// b only.
func TestServeDrainZone(t *testing.T) {
	opts := translator.DefaultOptions()
	opts.DrainZones = []string{"b"}
	cp := newServeControlPlaneWith(t, opts)
	web := dnsName{name: "web.shop", services: []service{
		{name: "shop/primary", weight: 1, endpoints: []endpoint{{addr: "10.1.0.1", zone: "a"}, {addr: "10.1.0.3", zone: "b"}}},
		{name: "shop/standby", weight: 1, priority: 1, endpoints: []endpoint{{addr: "10.2.0.1", zone: "b"}, {addr: "10.2.0.2", zone: "c"}}},
	}}
	d, c := setup(t, cp, web)
	onlyAnswers(t, d, "web.shop", 2000, "10.1.0.1")

	web.services[0].endpoints[0].zone = "b"
	moved := steerServe(t, cp, c, "web.shop", []string{"10.2.0.2"}, func() { writeFile(t, cp.dir, "web.shop.yaml", manifests(web)) })
	counts := onlyAnswers(t, d, "web.shop", 2000, "10.2.0.2")
	t.Logf("primary's last endpoint outside zone b moved into it: %s; then %s", moved, sortedCounts(counts))

	web.services[0].endpoints[0].zone = "a"
	back := steerServe(t, cp, c, "web.shop", []string{"10.1.0.1"}, func() { writeFile(t, cp.dir, "web.shop.yaml", manifests(web)) })
	onlyAnswers(t, d, "web.shop", 2000, "10.1.0.1")
	t.Logf("DNS zone drain (--drain-zone b): failover %v, return %v (write to first answer on the other side)", moved.answered, back.answered)
}
