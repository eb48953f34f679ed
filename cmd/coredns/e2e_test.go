package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/stattest"
	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/xdstest"
)

const zone = "lb.example.org."

// corefile is the server block of most tests. cache is there on purpose:
// switchyard runs before it in this binary's chain, so answers are never
// cached and every query is a fresh pick.
const corefile = `lb.example.org:0 {
    bind 127.0.0.1
    errors
    cache 30
    switchyard grpc://{{XDS}} {
        node e2e
    }
}
`

// setup starts a control plane serving names and CoreDNS connected to it,
// and waits until the first name is answered.
func setup(t *testing.T, cp controlPlane, names ...dnsName) (*coreDNS, *client) {
	t.Helper()
	cp.apply(t, names...)
	d := startCoreDNS(t, corefile, cp)
	c := d.client(t)
	waitAnswered(t, c, names[0].name+"."+zone)
	return d, c
}

func waitAnswered(t *testing.T, c *client, name string) time.Duration {
	t.Helper()
	return xdstest.Eventually(t, 30*time.Second, name+" answered", func() (bool, string) {
		got := c.a(t, name)
		return len(got) == 1 && strings.HasPrefix(got[0], "10."), fmt.Sprint(got)
	})
}

// shares sums counts by the second octet of the address ("10.N.0.x"),
// which the tests give each service.
func shares(counts map[string]int) map[int]float64 {
	total := 0
	by := map[int]int{}
	for a, n := range counts {
		total += n
		var net, x int
		if _, err := fmt.Sscanf(a, "10.%d.0.%d", &net, &x); err != nil {
			net = -1
		}
		by[net] += n
	}
	out := map[int]float64{}
	for k, n := range by {
		out[k] = float64(n) / float64(total)
	}
	return out
}

// checkShares requires each service's share within ±5 points.
func checkShares(t *testing.T, counts map[string]int, want map[int]float64) {
	t.Helper()
	got := shares(counts)
	for net, w := range want {
		if math.Abs(got[net]-w) > 0.05 {
			t.Errorf("service 10.%d.0.0/24: share %.3f, want %.2f ± 0.05 (counts %v)", net, got[net], w, counts)
		}
	}
	for net := range got {
		if _, ok := want[net]; !ok {
			t.Errorf("answers outside the expected services: %v", counts)
		}
	}
}

func checkChiSquare(t *testing.T, counts map[string]int, expected map[string]float64) {
	t.Helper()
	stat, p, err := stattest.ChiSquare(counts, expected)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chi-square %.2f, p = %.3f over %d answers: %s", stat, p, total(counts), sortedCounts(counts))
	if p < stattest.MinP {
		t.Errorf("split does not follow the weights: p = %.2g", p)
	}
}

func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

func sortedCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, counts[k])
	}
	return strings.Join(parts, " ")
}

func TestWeightedSplit(t *testing.T) { eachControlPlane(t, testWeightedSplit) }

func testWeightedSplit(t *testing.T, cp controlPlane) {
	web := dnsName{name: "web.shop", services: []service{
		{name: "shop/v1", weight: 60, endpoints: endpoints(1, 2)},
		{name: "shop/v2", weight: 30, endpoints: endpoints(2, 2)},
		{name: "shop/v3", weight: 10, endpoints: endpoints(3, 2)},
	}}
	d, c := setup(t, cp, web)
	counts := d.split(t, "web.shop."+zone, 6000)
	t.Logf("60/30/10 split over 6000 queries: %.1f%% / %.1f%% / %.1f%%", 100*shares(counts)[1], 100*shares(counts)[2], 100*shares(counts)[3])
	checkShares(t, counts, map[int]float64{1: .6, 2: .3, 3: .1})
	checkChiSquare(t, counts, map[string]float64{
		"10.1.0.1": .3, "10.1.0.2": .3, "10.2.0.1": .15, "10.2.0.2": .15, "10.3.0.1": .05, "10.3.0.2": .05,
	})

	// SRV carries the same split as weights, with glue.
	r := c.query(t, "web.shop."+zone, dns.TypeSRV)
	weights := map[string]uint16{}
	for _, rr := range r.Answer {
		s := rr.(*dns.SRV)
		weights[s.Target] = s.Weight
	}
	want := map[string]uint16{
		"10-1-0-1.web.shop." + zone: 3000, "10-1-0-2.web.shop." + zone: 3000,
		"10-2-0-1.web.shop." + zone: 1500, "10-2-0-2.web.shop." + zone: 1500,
		"10-3-0-1.web.shop." + zone: 500, "10-3-0-2.web.shop." + zone: 500,
	}
	if fmt.Sprint(weights) != fmt.Sprint(want) || len(r.Extra) != 6 {
		t.Errorf("SRV weights %v, want %v; %d glue records", weights, want, len(r.Extra))
	}
}

func TestEndpointRemoved(t *testing.T) { eachControlPlane(t, testEndpointRemoved) }

func testEndpointRemoved(t *testing.T, cp controlPlane) {
	web := dnsName{name: "web.shop", services: []service{{name: "shop/v1", weight: 1, endpoints: endpoints(1, 3)}}}
	d, c := setup(t, cp, web)
	if got := d.split(t, "web.shop."+zone, 300); got["10.1.0.3"] == 0 {
		t.Fatalf("10.1.0.3 never answered before the removal: %v", got)
	}
	web.services[0].endpoints = endpoints(1, 2)
	start := time.Now()
	cp.apply(t, web)
	waitApplied(t, c, cp, zone)
	delay := time.Since(start)
	t.Logf("endpoint removal applied %s after the control plane's update", delay)
	counts := d.split(t, "web.shop."+zone, 2000)
	if counts["10.1.0.3"] > 0 {
		t.Errorf("removed endpoint answered %d times after the update arrived", counts["10.1.0.3"])
	}
	checkChiSquare(t, counts, map[string]float64{"10.1.0.1": .5, "10.1.0.2": .5})
}

func TestPriorityFailover(t *testing.T) { eachControlPlane(t, testPriorityFailover) }

func testPriorityFailover(t *testing.T, cp controlPlane) {
	web := dnsName{name: "web.shop", services: []service{
		{name: "shop/primary", weight: 1, endpoints: endpoints(1, 2)},
		{name: "shop/standby", weight: 1, priority: 1, endpoints: endpoints(2, 2)},
	}}
	d, c := setup(t, cp, web)

	// Healthy primary: the standby gets nothing.
	checkShares(t, d.split(t, "web.shop."+zone, 1000), map[int]float64{1: 1})

	// Half the primary not ready.
	web.services[0].endpoints[1].state = notReady
	cp.apply(t, web)
	waitApplied(t, c, cp, zone)
	counts := d.split(t, "web.shop."+zone, 4000)
	t.Logf("primary half ready: %.1f%% primary / %.1f%% standby", 100*shares(counts)[1], 100*shares(counts)[2])
	if cp.reportsUnhealthy() {
		// Sent as UNHEALTHY: 1.4 × 50 % = 70 % stays, 30 % fails over.
		checkShares(t, counts, map[int]float64{1: .7, 2: .3})
		checkChiSquare(t, counts, map[string]float64{"10.1.0.1": .7, "10.1.0.2": 0, "10.2.0.1": .15, "10.2.0.2": .15})
	} else if counts["10.1.0.1"] != 4000 {
		// Switchyard leaves a not-ready endpoint out: the primary's ready
		// half is all of it and keeps every query.
		t.Errorf("counts %v, want every answer 10.1.0.1", counts)
	}

	// Primary emptied: everything on the standby.
	web.services[0].endpoints = nil
	start := time.Now()
	cp.apply(t, web)
	waitApplied(t, c, cp, zone)
	t.Logf("failover to the standby applied after %s", time.Since(start))
	checkShares(t, d.split(t, "web.shop."+zone, 1000), map[int]float64{2: 1})

	// Primary back: traffic returns.
	web.services[0].endpoints = endpoints(1, 2)
	start = time.Now()
	cp.apply(t, web)
	waitApplied(t, c, cp, zone)
	t.Logf("failback to the primary applied after %s", time.Since(start))
	checkShares(t, d.split(t, "web.shop."+zone, 1000), map[int]float64{1: 1})
}

func TestDraining(t *testing.T) { eachControlPlane(t, testDraining) }

func testDraining(t *testing.T, cp controlPlane) {
	web := dnsName{name: "web.shop", services: []service{
		{name: "shop/v1", weight: 1, endpoints: []endpoint{
			{addr: "10.1.0.1", zone: "a"}, {addr: "10.1.0.2", zone: "a", state: draining},
			{addr: "10.1.0.3", zone: "b"}, {addr: "10.1.0.4", zone: "b", state: terminating},
		}},
		{name: "shop/standby", weight: 1, priority: 1, endpoints: endpoints(2, 2)},
	}}
	d, c := setup(t, cp, web)

	// Drained endpoints are never answered and do not push traffic to the
	// standby (Envoy excludes them from the health ratio).
	counts := d.split(t, "web.shop."+zone, 3000)
	checkChiSquare(t, counts, map[string]float64{"10.1.0.1": .5, "10.1.0.3": .5, "10.1.0.2": 0, "10.1.0.4": 0})

	// Drain zone b: only zone a is answered.
	web.services[0].endpoints[2].state = draining
	start := time.Now()
	cp.apply(t, web)
	waitApplied(t, c, cp, zone)
	t.Logf("zone drain applied after %s", time.Since(start))
	if got := d.split(t, "web.shop."+zone, 1000); got["10.1.0.1"] != 1000 {
		t.Errorf("after draining zone b: %v, want only 10.1.0.1", got)
	}

	// Drain the whole Service: the standby takes over.
	web.services[0].endpoints[0].state = draining
	cp.apply(t, web)
	waitApplied(t, c, cp, zone)
	checkShares(t, d.split(t, "web.shop."+zone, 1000), map[int]float64{2: 1})
}

func TestNamesFollowTheControlPlane(t *testing.T) {
	eachControlPlane(t, testNamesFollowTheControlPlane)
}

func testNamesFollowTheControlPlane(t *testing.T, cp controlPlane) {
	web := dnsName{name: "web.shop", services: []service{{name: "shop/v1", weight: 1, endpoints: endpoints(1, 1)}}}
	_, c := setup(t, cp, web)

	// A name added after the plugin connected.
	if got := c.a(t, "new.shop."+zone); fmt.Sprint(got) != "[NXDOMAIN]" {
		t.Fatalf("new.shop before it exists: %v", got)
	}
	start := time.Now()
	cp.apply(t, dnsName{name: "new.shop", services: []service{{name: "shop/new", weight: 1, endpoints: endpoints(5, 1)}}})
	waitAnswered(t, c, "new.shop."+zone)
	t.Logf("new name answered %s after it was added", time.Since(start))

	// An update of endpoints only.
	web.services[0].endpoints = endpoints(6, 1)
	cp.apply(t, web)
	xdstest.Eventually(t, 30*time.Second, "endpoint-only update", func() (bool, string) {
		got := c.a(t, "web.shop."+zone)
		return fmt.Sprint(got) == "[10.6.0.1]", fmt.Sprint(got)
	})

	// A name removed.
	cp.remove(t, "new.shop")
	xdstest.Eventually(t, 30*time.Second, "removed name", func() (bool, string) {
		got := c.a(t, "new.shop."+zone)
		return fmt.Sprint(got) == "[NXDOMAIN]", fmt.Sprint(got)
	})
}

func TestControlPlaneRestart(t *testing.T) { eachControlPlane(t, testControlPlaneRestart) }

func testControlPlaneRestart(t *testing.T, cp controlPlane) {
	web := dnsName{name: "web.shop", services: []service{{name: "shop/v1", weight: 1, endpoints: endpoints(1, 1)}}}
	d, c := setup(t, cp, web)

	cp.stop(t)
	xdstest.Eventually(t, 30*time.Second, "disconnect noticed", func() (bool, string) {
		txt := c.txt(t, zone)
		return strings.Contains(txt, "connected=false"), txt
	})
	// The last good data keeps being answered.
	if got := d.split(t, "web.shop."+zone, 500); got["10.1.0.1"] != 500 {
		t.Fatalf("while the control plane is down: %v", got)
	}
	// Changed while down, then back up: the plugin reconnects and follows.
	web.services[0].endpoints = endpoints(2, 1)
	cp.apply(t, web)
	start := time.Now()
	cp.restart(t)
	xdstest.Eventually(t, 10*time.Second, "reconnected", func() (bool, string) {
		got := c.a(t, "web.shop."+zone)
		return fmt.Sprint(got) == "[10.2.0.1]", fmt.Sprint(got)
	})
	t.Logf("control plane restarted: change answered after %s", time.Since(start))
	cp.apply(t, dnsName{name: "new.shop", services: []service{{name: "shop/new", weight: 1, endpoints: endpoints(3, 1)}}})
	waitAnswered(t, c, "new.shop."+zone)
}

func TestAnswerShapes(t *testing.T) { eachControlPlane(t, testAnswerShapes) }

func testAnswerShapes(t *testing.T, cp controlPlane) {
	cp.apply(t, dnsName{name: "web.shop", services: []service{{name: "shop/v1", weight: 1, endpoints: endpoints(1, 1)}}})
	d := startCoreDNS(t, corefile+`
fall.example.org:0 {
    bind 127.0.0.1
    switchyard grpc://{{XDS}} {
        fallthrough
    }
    whoami
}
`, cp)
	c := d.client(t)
	waitAnswered(t, c, "web.shop."+zone)
	waitAnswered(t, c, "web.shop.fall.example.org.")

	r := c.query(t, "nope."+zone, dns.TypeA)
	if r.Rcode != dns.RcodeNameError || len(r.Ns) != 1 || r.Ns[0].Header().Rrtype != dns.TypeSOA || !r.Authoritative {
		t.Errorf("unknown name: %v", r)
	}
	r = c.query(t, zone, dns.TypeSOA)
	if len(r.Answer) != 1 || r.Answer[0].(*dns.SOA).Ns != "ns.dns."+zone || r.Answer[0].Header().Ttl != 5 {
		t.Errorf("apex SOA: %v", r)
	}
	r = c.query(t, zone, dns.TypeNS)
	if len(r.Answer) != 1 || len(r.Extra) != 1 || r.Extra[0].(*dns.A).A.String() != "127.0.0.1" {
		t.Errorf("apex NS: %v", r)
	}
	r = c.query(t, "web.shop."+zone, dns.TypeAAAA)
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || len(r.Ns) != 1 {
		t.Errorf("AAAA of an IPv4-only name is not NODATA: %v", r)
	}
	if txt := c.txt(t, "web.shop."+zone); !strings.Contains(txt, "load_a=p0:100%") {
		t.Errorf("TXT: %s", txt)
	}
	// With fallthrough, an unknown name goes on to whoami; known names
	// are answered by switchyard.
	r = c.query(t, "nope.fall.example.org.", dns.TypeA)
	if r.Rcode != dns.RcodeSuccess || len(r.Extra) == 0 {
		t.Errorf("fallthrough to whoami: %v", r)
	}
	if got := c.a(t, "web.shop.fall.example.org."); fmt.Sprint(got) != "[10.1.0.1]" {
		t.Errorf("known name in the fallthrough zone: %v", got)
	}
}

func TestReadyHealthAndMetrics(t *testing.T) { eachControlPlane(t, testReadyHealthAndMetrics) }

func testReadyHealthAndMetrics(t *testing.T, cp controlPlane) {
	cp.apply(t, dnsName{name: "web.shop", services: []service{{name: "shop/v1", weight: 1, endpoints: endpoints(1, 1)}}})
	cp.stop(t)
	readyAddr, healthAddr, metricsAddr := freePort(t), freePort(t), freePort(t)
	d := startCoreDNS(t, fmt.Sprintf(`lb.example.org:0 {
    bind 127.0.0.1
    ready %s
    health %s
    prometheus %s
    switchyard grpc://{{XDS}}
}
`, readyAddr, healthAddr, metricsAddr), cp)
	c := d.client(t)

	// Before any data: not ready, alive, and SERVFAIL.
	xdstest.Eventually(t, 30*time.Second, "ready endpoint up", func() (bool, string) {
		code, body := get("http://" + readyAddr + "/ready")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "switchyard"), fmt.Sprint(code, " ", body)
	})
	if code, _ := get("http://" + healthAddr + "/health"); code != http.StatusOK {
		t.Errorf("health: %d", code)
	}
	if r := c.query(t, "web.shop."+zone, dns.TypeA); r.Rcode != dns.RcodeServerFailure {
		t.Errorf("before data: rcode %s, want SERVFAIL", dns.RcodeToString[r.Rcode])
	}

	cp.restart(t)
	xdstest.Eventually(t, 10*time.Second, "ready", func() (bool, string) {
		code, body := get("http://" + readyAddr + "/ready")
		return code == http.StatusOK, fmt.Sprint(code, " ", body)
	})
	waitAnswered(t, c, "web.shop."+zone)

	_, metrics := get("http://" + metricsAddr + "/metrics")
	label := `control_plane="` + cp.addr() + `"`
	for _, want := range []string{
		"coredns_switchyard_clusters{" + label + "} 1",
		"coredns_switchyard_endpoints{" + label + `,health="healthy"} 1`,
		"coredns_switchyard_xds_acks_total{" + label + `,type="cds"} 1`,
		"coredns_switchyard_xds_acks_total{" + label + `,type="eds"} 1`,
		"coredns_switchyard_xds_connected{" + label + "} 1",
		`coredns_switchyard_answers_total{qtype="A",rcode="NOERROR",server="dns://127.0.0.1:`,
		`coredns_switchyard_answers_total{qtype="A",rcode="SERVFAIL",server="dns://127.0.0.1:`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func get(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
