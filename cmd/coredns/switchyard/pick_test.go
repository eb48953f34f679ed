package switchyard

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/stattest"
)

// sample picks n times from a family and counts addresses.
func sample(e *entry, f family, n int) map[string]int {
	counts := map[string]int{}
	for range n {
		p := e.pickers[f].pick()
		if p == nil {
			counts["<none>"]++
			continue
		}
		counts[p.addr.String()]++
	}
	return counts
}

// checkSplit samples and runs a chi-square test against expected.
func checkSplit(t *testing.T, e *entry, f family, n int, expected map[string]float64) {
	t.Helper()
	got := sample(e, f, n)
	stat, p, err := stattest.ChiSquare(got, expected)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("n=%d counts=%v chi2=%.2f p=%.4f", n, got, stat, p)
	if p < stattest.MinP {
		t.Errorf("split %v does not match %v: chi2=%.1f p=%.2g", got, expected, stat, p)
	}
}

func TestPickLocalityWeights(t *testing.T) {
	// Three services weighted 60/30/10 as three localities with different
	// endpoint counts: the locality weight decides, not the endpoint count.
	e := newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 60, ep("10.0.0.1", healthy, 0)),
		loc("a", "shop/v2", 0, 30, ep("10.0.1.1", healthy, 0), ep("10.0.1.2", healthy, 0)),
		loc("a", "shop/v3", 0, 10, ep("10.0.2.1", healthy, 0), ep("10.0.2.2", healthy, 0), ep("10.0.2.3", healthy, 0), ep("10.0.2.4", healthy, 0)),
	))
	checkSplit(t, e, familyV4, 100000, map[string]float64{
		"10.0.0.1": 0.6,
		"10.0.1.1": 0.15, "10.0.1.2": 0.15,
		"10.0.2.1": 0.025, "10.0.2.2": 0.025, "10.0.2.3": 0.025, "10.0.2.4": 0.025,
	})
}

func TestPickLocalityHealthyShare(t *testing.T) {
	// Locality a has 2 of 4 endpoints healthy: availability
	// min(1, 1.4 × 2/4) = 0.7, effective weight 35 against b's 50.
	// Locality c has 3 of 4 healthy: min(1, 1.4 × 0.75) = 1, full weight.
	e := newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 50, ep("10.0.0.1", healthy, 0), ep("10.0.0.2", healthy, 0), ep("10.0.0.3", unhealthy, 0), ep("10.0.0.4", unhealthy, 0)),
		loc("b", "shop/v1", 0, 50, ep("10.0.1.1", healthy, 0)),
		loc("c", "shop/v1", 0, 15, ep("10.0.2.1", healthy, 0), ep("10.0.2.2", healthy, 0), ep("10.0.2.3", healthy, 0), ep("10.0.2.4", unhealthy, 0)),
	))
	total := 35.0 + 50 + 15
	checkSplit(t, e, familyV4, 100000, map[string]float64{
		"10.0.0.1": 35 / total / 2, "10.0.0.2": 35 / total / 2,
		"10.0.1.1": 50 / total,
		"10.0.2.1": 15 / total / 3, "10.0.2.2": 15 / total / 3, "10.0.2.3": 15 / total / 3,
	})
}

func TestPickEndpointWeights(t *testing.T) {
	e := newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 1, ep("10.0.0.1", healthy, 1), ep("10.0.0.2", healthy, 2), ep("10.0.0.3", unknown, 3), ep("10.0.0.4", healthy, 4)),
	))
	checkSplit(t, e, familyV4, 100000, map[string]float64{
		"10.0.0.1": 0.1, "10.0.0.2": 0.2, "10.0.0.3": 0.3, "10.0.0.4": 0.4,
	})
}

func TestPickWithoutLocalityWeighting(t *testing.T) {
	// Without locality_weighted_lb_config Envoy ignores locality weights
	// and picks among all endpoints of the priority by their weights.
	e := newTestEntry(t, false, cla("web.shop",
		loc("a", "shop/v1", 0, 90, ep("10.0.0.1", healthy, 0)),
		loc("b", "shop/v2", 0, 10, ep("10.0.1.1", healthy, 0), ep("10.0.1.2", healthy, 2)),
	))
	checkSplit(t, e, familyV4, 100000, map[string]float64{"10.0.0.1": 0.25, "10.0.1.1": 0.25, "10.0.1.2": 0.5})
}

// priorityCase builds P0 with ten endpoints of which the first nHealthy are
// healthy and the rest have health rest, and a healthy P1 of two.
func priorityCase(t *testing.T, nHealthy int, rest envoyHealth) *entry {
	return newTestEntry(t, true, priorityCaseCLA(nHealthy, rest))
}

func priorityCaseCLA(nHealthy int, rest envoyHealth) *envoyCLA {
	var p0 []*envoyLbEndpoint
	for i := range 10 {
		h := healthy
		if i >= nHealthy {
			h = rest
		}
		p0 = append(p0, ep(fmt.Sprintf("10.0.0.%d", i+1), h, 0))
	}
	return cla("web.shop",
		loc("a", "shop/primary", 0, 1, p0...),
		loc("a", "shop/standby", 1, 1, ep("10.1.0.1", healthy, 0), ep("10.1.0.2", healthy, 0)),
	)
}

func TestPriorityLoads(t *testing.T) {
	// Envoy's table (overprovisioning 1.4): P0's load is
	// min(100, 140 × healthy/total) percent, the rest spills to P1.
	// DRAINING endpoints leave the total: draining never spills.
	// DEGRADED endpoints are used only when the healthy ones of every
	// priority are not enough; here P1 is, so they get nothing.
	cases := []struct {
		healthy int
		rest    envoyHealth
		want    string
	}{
		{10, unhealthy, "p0:100%"},
		{8, unhealthy, "p0:100%"},
		{7, unhealthy, "p0:98%,p1:2%"},
		{5, unhealthy, "p0:70%,p1:30%"},
		{1, unhealthy, "p0:14%,p1:86%"},
		{0, unhealthy, "p1:100%"},
		{1, draining, "p0:100%"},
		{0, draining, "p1:100%"},
		{5, degraded, "p0:70%,p1:30%"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d_healthy_%d_%s", c.healthy, 10-c.healthy, healthOf(c.rest)), func(t *testing.T) {
			e := priorityCase(t, c.healthy, c.rest)
			if got := loads(&e.pickers[familyV4]); got != c.want {
				t.Errorf("loads = %s, want %s", got, c.want)
			}
		})
	}
}

func TestPriorityFailoverSplit(t *testing.T) {
	// Half of P0 healthy: 70 % to P0's five, 30 % to P1's two.
	e := priorityCase(t, 5, unhealthy)
	want := map[string]float64{"10.1.0.1": 0.15, "10.1.0.2": 0.15}
	for i := range 5 {
		want[fmt.Sprintf("10.0.0.%d", i+1)] = 0.14
	}
	checkSplit(t, e, familyV4, 100000, want)
}

func TestDegradedIsLastResort(t *testing.T) {
	// P0: one healthy, nine degraded; no other priority. Health 14 %,
	// degraded availability 100 %: Envoy gives 14 % to the healthy one
	// and the remaining 86 % to the degraded ones.
	var p0 []*envoyLbEndpoint
	p0 = append(p0, ep("10.0.0.1", healthy, 0))
	for i := 2; i <= 10; i++ {
		p0 = append(p0, ep(fmt.Sprintf("10.0.0.%d", i), degraded, 0))
	}
	e := newTestEntry(t, true, cla("web.shop", loc("a", "shop/v1", 0, 1, p0...)))
	if got, want := loads(&e.pickers[familyV4]), "p0:14%,p0/degraded:86%"; got != want {
		t.Fatalf("loads = %s, want %s", got, want)
	}
	// With a healthy standby, degraded endpoints get nothing.
	e = newTestEntry(t, true, cla("web.shop", loc("a", "shop/v1", 0, 1, p0...), loc("a", "shop/v2", 1, 1, ep("10.1.0.1", healthy, 0))))
	if got, want := loads(&e.pickers[familyV4]), "p0:14%,p1:86%"; got != want {
		t.Fatalf("with standby: loads = %s, want %s", got, want)
	}
}

func TestDrainingNeverPicked(t *testing.T) {
	e := newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 1, ep("10.0.0.1", healthy, 0), ep("10.0.0.2", draining, 100), ep("10.0.0.3", healthy, 0), ep("10.0.0.4", unhealthy, 100)),
	))
	checkSplit(t, e, familyV4, 50000, map[string]float64{"10.0.0.1": 0.5, "10.0.0.3": 0.5, "10.0.0.2": 0, "10.0.0.4": 0})
	var buf [maxMaxRecords]*endpoint
	for _, x := range e.pickers[familyV4].pickN(buf[:0], 32) {
		if x.health != healthHealthy {
			t.Errorf("pickN returned %s endpoint %s", x.health, x.addr)
		}
	}
}

func TestAddressFamilies(t *testing.T) {
	// P0 has IPv6 only, P1 IPv4 only: each family runs Envoy's selection
	// over its own endpoints, so A answers come from P1 and AAAA from P0.
	e := newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 1, ep("2001:db8::1", healthy, 0), ep("2001:db8::2", healthy, 0)),
		loc("a", "shop/v2", 1, 1, ep("10.1.0.1", healthy, 0), ep("::ffff:10.1.0.2", healthy, 0)),
	))
	checkSplit(t, e, familyV4, 20000, map[string]float64{"10.1.0.1": 0.5, "10.1.0.2": 0.5})
	checkSplit(t, e, familyV6, 20000, map[string]float64{"2001:db8::1": 0.5, "2001:db8::2": 0.5})

	only4 := newTestEntry(t, true, cla("web.shop", loc("a", "shop/v1", 0, 1, ep("10.0.0.1", healthy, 0))))
	if p := only4.pickers[familyV6].pick(); p != nil {
		t.Errorf("AAAA pick from an IPv4-only cluster = %s, want none", p.addr)
	}
	drained6 := newTestEntry(t, true, cla("web.shop", loc("a", "shop/v1", 0, 1, ep("10.0.0.1", healthy, 0), ep("2001:db8::1", draining, 0))))
	if p := drained6.pickers[familyV6].pick(); p != nil {
		t.Errorf("AAAA pick with the only IPv6 endpoint draining = %s, want none", p.addr)
	}
}

func TestZeroWeightLocality(t *testing.T) {
	// A locality without weight gets nothing when others have weights,
	// and Envoy falls back to all endpoints when none has weight.
	e := newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 0, ep("10.0.0.1", healthy, 0)),
		loc("a", "shop/v2", 0, 5, ep("10.0.1.1", healthy, 0)),
	))
	checkSplit(t, e, familyV4, 10000, map[string]float64{"10.0.1.1": 1, "10.0.0.1": 0})
	e = newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 0, ep("10.0.0.1", healthy, 0)),
		loc("b", "shop/v1", 0, 0, ep("10.0.1.1", healthy, 0)),
	))
	checkSplit(t, e, familyV4, 20000, map[string]float64{"10.0.1.1": 0.5, "10.0.0.1": 0.5})
}

func TestEmptyLocalityKeepsPriority(t *testing.T) {
	// Switchyard sends a service without endpoints as an empty locality of
	// weight 1; it must neither take traffic nor break the priority.
	e := newTestEntry(t, true, cla("web.shop",
		loc("", "shop/v1", 0, 1),
		loc("a", "shop/v2", 0, 1, ep("10.0.1.1", healthy, 0)),
		loc("", "shop/standby", 1, 1, ep("10.1.0.1", healthy, 0)),
	))
	if got, want := loads(&e.pickers[familyV4]), "p0:100%"; got != want {
		t.Fatalf("loads = %s, want %s", got, want)
	}
	e = newTestEntry(t, true, cla("web.shop", loc("", "shop/v1", 0, 1), loc("", "shop/standby", 1, 1, ep("10.1.0.1", healthy, 0))))
	if got, want := loads(&e.pickers[familyV4]), "p1:100%"; got != want {
		t.Fatalf("empty primary: loads = %s, want %s", got, want)
	}
}

func TestOverprovisioningFactorFromPolicy(t *testing.T) {
	c := priorityCaseCLA(5, unhealthy)
	c.Policy = &envoyPolicy{OverprovisioningFactor: wrapperspb.UInt32(100)}
	e := newTestEntry(t, true, c)
	if got, want := loads(&e.pickers[familyV4]), "p0:50%,p1:50%"; got != want {
		t.Errorf("factor 1.0: loads = %s, want %s", got, want)
	}
}

func TestPickNDistinct(t *testing.T) {
	e := newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 99, ep("10.0.0.1", healthy, 0)),
		loc("a", "shop/v2", 0, 1, ep("10.0.1.1", healthy, 0), ep("10.0.1.2", healthy, 0)),
		loc("a", "shop/v3", 1, 1, ep("10.1.0.1", healthy, 0)),
	))
	var buf [maxMaxRecords]*endpoint
	for range 1000 {
		got := e.pickers[familyV4].pickN(buf[:0], 5)
		// The standby is unreachable while P0 is healthy: three records.
		if len(got) != 3 {
			t.Fatalf("pickN(5) returned %d records, want 3", len(got))
		}
		seen := map[*endpoint]bool{}
		for _, x := range got {
			if seen[x] {
				t.Fatalf("pickN returned %s twice", x.addr)
			}
			seen[x] = true
			if x.priority != 0 {
				t.Fatalf("pickN returned standby %s", x.addr)
			}
		}
	}
	if got := e.pickers[familyV4].pickN(buf[:0], 1); len(got) != 1 {
		t.Fatalf("pickN(1) = %d records", len(got))
	}
}

func TestPickAllocatesNothing(t *testing.T) {
	e := priorityCase(t, 5, unhealthy)
	p := &e.pickers[familyV4]
	var buf [maxMaxRecords]*endpoint
	if n := testing.AllocsPerRun(1000, func() { _ = p.pick(); _ = p.pickN(buf[:0], 4) }); n != 0 {
		t.Errorf("pick allocates %.1f times per call, want 0", n)
	}
}

func TestSRVTargets(t *testing.T) {
	// SRV keeps xDS priorities, weights follow locality × endpoint weight
	// and sum to about 10000 per priority; degraded endpoints come after
	// every priority; drained and unhealthy ones are left out.
	e := newTestEntry(t, true, cla("web.shop",
		loc("a", "shop/v1", 0, 60, ep("10.0.0.1", healthy, 0)),
		loc("a", "shop/v2", 0, 40, ep("10.0.1.1", healthy, 1), ep("10.0.1.2", healthy, 3), ep("10.0.1.3", draining, 0)),
		loc("a", "shop/v3", 1, 1, ep("10.1.0.1", healthy, 0), ep("10.1.0.2", degraded, 0), ep("10.1.0.3", unhealthy, 0)),
	))
	got := map[string][2]uint16{}
	for _, s := range e.srv {
		got[s.ep.addr.String()] = [2]uint16{s.priority, s.weight}
	}
	want := map[string][2]uint16{
		"10.0.0.1": {0, 6000},
		"10.0.1.1": {0, 1000},
		"10.0.1.2": {0, 3000},
		"10.1.0.1": {1, 10000},
		"10.1.0.2": {3, 10000},
	}
	if len(got) != len(want) {
		t.Errorf("SRV targets %v, want %v", got, want)
	}
	for k, w := range want {
		if g := got[k]; g != w {
			t.Errorf("SRV %s = priority %d weight %d, want %d %d", k, g[0], g[1], w[0], w[1])
		}
	}
}

func BenchmarkPick(b *testing.B) {
	e := newTestEntry(b, true, cla("web.shop",
		loc("a", "shop/v1", 0, 60, ep("10.0.0.1", healthy, 0), ep("10.0.0.2", healthy, 0)),
		loc("b", "shop/v2", 0, 30, ep("10.0.1.1", healthy, 0), ep("10.0.1.2", unhealthy, 0)),
		loc("c", "shop/v3", 0, 10, ep("10.0.2.1", healthy, 0)),
		loc("a", "shop/standby", 1, 1, ep("10.1.0.1", healthy, 0)),
	))
	p := &e.pickers[familyV4]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if p.pick() == nil {
				b.Fatal("no pick")
			}
		}
	})
}
