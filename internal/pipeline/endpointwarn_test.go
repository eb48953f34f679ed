package pipeline

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv1 "k8s.io/api/discovery/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// servedAddresses returns the endpoint addresses of the envoy group's
// load assignment of the cluster whose name starts with prefix, sorted.
func servedAddresses(t *testing.T, cache *xdscache.Cache, prefix string) []string {
	t.Helper()
	var out []string
	for _, r := range cache.Resources(xdsres.GroupEnvoy, typeEndpoint) {
		if !strings.HasPrefix(r.Name, prefix) {
			continue
		}
		cla := r.Decoded().(*envoy_config_endpoint_v3.ClusterLoadAssignment)
		for _, l := range cla.GetEndpoints() {
			for _, e := range l.GetLbEndpoints() {
				out = append(out, e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress())
			}
		}
	}
	slices.Sort(out)
	return out
}

// warnedWith returns the EndpointInvalid warning of st containing text, or "".
func warnedWith(st *dag.Status, text string) string {
	if st == nil {
		return ""
	}
	for _, w := range st.Warnings {
		if w.Reason == ReasonEndpointInvalid && strings.Contains(w.Message, text) {
			return w.Message
		}
	}
	return ""
}

// TestBadEndpointDoesNotFreezeLoadAssignment: the input that made the
// gate hold a cluster's whole load assignment at its last good version
// (an address that is not an IP literal, a port above 65535) now only
// loses its own endpoints. The rest of the Service's endpoints are served
// and keep following their slices, nothing is withheld, and the proxy
// stays valid with a warning naming the slice, the address and the
// reason, set and cleared on the endpoint path.
func TestBadEndpointDoesNotFreezeLoadAssignment(t *testing.T) {
	c := newClock()
	p, cache := newPipeline(c)
	if _, err := p.Apply(upserts(t, svc("a"), slice("a", "10.0.0.1"), proxyTo("app", "app.example.com", "a"))); err != nil {
		t.Fatal(err)
	}
	second := slice("a", "10.0.0.2")
	second.Name = "a-2"
	second.Endpoints = append(second.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0.999"}})
	huge := slicePort("a", "10.0.0.3", 70000)
	huge.Name = "a-3"
	res, err := p.Apply(upserts(t, second, huge))
	if err != nil {
		t.Fatal(err)
	}
	if res.Full {
		t.Fatal("a batch of slices must take the endpoint path")
	}
	if got := servedAddresses(t, cache, "shop/a/"); !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Fatalf("served endpoints %v, want the two usable ones", got)
	}
	if rj := p.Rejected(); len(rj) != 0 {
		t.Fatalf("the gate withholds %v, want nothing", rj)
	}
	assertServedValid(t, cache)
	changed := statusOf(res.StatusUpdate.Changed, "shop", "app")
	for _, want := range []string{`EndpointSlice shop/a-2: endpoint "10.0.0.999" is left out: not an IP address`, `EndpointSlice shop/a-3 is left out: port "http": 70000 is not a port (1-65535)`} {
		if warnedWith(changed, want) == "" {
			t.Errorf("the batch's status update does not warn %q: %+v", want, changed)
		}
	}
	if st := statusOf(p.Statuses(), "shop", "app"); st.State != switchyardv1.StatusValid || len(st.Warnings) != 2 {
		t.Errorf("shop/app must stay valid with the two warnings: %+v", st)
	}

	// The good slice still moves the load assignment.
	c.add(1)
	if _, err := p.Apply(upserts(t, slice("a", "10.0.0.5"))); err != nil {
		t.Fatal(err)
	}
	if got := servedAddresses(t, cache, "shop/a/"); !slices.Equal(got, []string{"10.0.0.2", "10.0.0.5"}) {
		t.Fatalf("after moving the good slice, served endpoints %v, want 10.0.0.2 and 10.0.0.5", got)
	}

	// Fixed, the warnings go, in the batch's update too.
	second.Endpoints = second.Endpoints[:1]
	huge.Ports[0].Port = ptr[int32](8080)
	res, err = p.Apply(upserts(t, second, huge))
	if err != nil {
		t.Fatal(err)
	}
	if st := statusOf(res.StatusUpdate.Changed, "shop", "app"); st == nil || len(st.Warnings) != 0 {
		t.Errorf("the fix must clear the warnings in the batch's update: %+v", st)
	}
	if st := statusOf(p.Statuses(), "shop", "app"); len(st.Warnings) != 0 {
		t.Errorf("warnings left after the fix: %+v", st.Warnings)
	}
	if got := servedAddresses(t, cache, "shop/a/"); !slices.Equal(got, []string{"10.0.0.2", "10.0.0.3", "10.0.0.5"}) {
		t.Errorf("after the fix, served endpoints %v", got)
	}
}

// TestEndpointWarningFollowsRoutes: a proxy that starts routing to a
// Service with a bad endpoint gets the warning, though the cluster and
// the slices are unchanged, and loses it when it routes elsewhere.
func TestEndpointWarningFollowsRoutes(t *testing.T) {
	c := newClock()
	p, _ := newPipeline(c)
	if _, err := p.Apply(upserts(t, svc("a"), svc("b"), slice("a", "10.0.0.1"), slice("b", "10.0.0.999"),
		proxyTo("one", "one.example.com", "b"), proxyTo("two", "two.example.com", "a"))); err != nil {
		t.Fatal(err)
	}
	if warnedWith(statusOf(p.Statuses(), "shop", "one"), "10.0.0.999") == "" || len(statusOf(p.Statuses(), "shop", "two").Warnings) != 0 {
		t.Fatalf("only shop/one routes to b: %+v / %+v", statusOf(p.Statuses(), "shop", "one"), statusOf(p.Statuses(), "shop", "two"))
	}
	c.add(1)
	res, err := p.Apply(upserts(t, proxyTo("two", "two.example.com", "b")))
	if err != nil {
		t.Fatal(err)
	}
	if warnedWith(statusOf(res.StatusUpdate.Changed, "shop", "two"), "10.0.0.999") == "" {
		t.Errorf("shop/two now routes to b and must be warned: %+v", statusOf(res.StatusUpdate.Changed, "shop", "two"))
	}
	c.add(1)
	if _, err := p.Apply(upserts(t, proxyTo("one", "one.example.com", "a"))); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(p.Statuses(), "shop", "one"); len(st.Warnings) != 0 {
		t.Errorf("shop/one routes to a now, and keeps warnings %+v", st.Warnings)
	}
}

// TestEndpointWarningsEqualFullBuild breaks EndpointSlices at random among
// random changes, with the real translator, and checks after every step
// that the statuses, EndpointInvalid warnings included, are those of a
// full build of the same objects: the warnings worked out per batch miss
// nothing and keep nothing stale. Repairing every slice clears them.
func TestEndpointWarningsEqualFullBuild(t *testing.T) {
	seeds, steps := 2, 50
	if testing.Short() {
		seeds, steps = 1, 20
	}
	warned := 0
	for seed := range int64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := startChurn(t, seed)
			rng := rand.New(rand.NewPCG(uint64(seed), 11))
			check := func(when string) {
				t.Helper()
				fresh, _ := newPipeline(newClock())
				if _, err := fresh.Apply(SnapshotChanges(r.mirror)); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(fresh.Statuses(), r.p.Statuses()); diff != "" {
					t.Fatalf("%s: statuses (-full +incremental):\n%s", when, diff)
				}
			}
			for step := range steps {
				changes, _, _ := r.m.Step()
				if rng.IntN(3) == 0 {
					changes = append(changes, breakSlice(t, r.mirror, rng))
				}
				r.settle(t, changes)
				for _, st := range r.p.Statuses() {
					if warnedWith(st, "") != "" {
						warned++
					}
				}
				check(fmt.Sprint("step ", step))
			}
			r.settle(t, repairSlices(t, r.mirror))
			check("after the repair")
			for _, st := range r.p.Statuses() {
				if w := warnedWith(st, ""); w != "" {
					t.Errorf("%s still warns %s", st.Key, w)
				}
			}
		})
	}
	if warned == 0 {
		t.Error("no step warned of anything: the test proves nothing")
	}
}

// TestEveryClusterProblemsIsEachClusters: the first build's checks, split
// over the cores, find for every cluster what checking it alone finds,
// on a directory shape with slices broken at random.
func TestEveryClusterProblemsIsEachClusters(t *testing.T) {
	p := builtDirectoryShape(t, 300)
	rng := rand.New(rand.NewPCG(7, 15))
	for range 40 {
		breakSlice(t, p.snap, rng)
	}
	clusters := p.engine.DAG().Clusters
	if len(clusters) < 512 {
		t.Fatalf("%d clusters: too few to be split between two cores", len(clusters))
	}
	got := everyClusterProblems(clusters, p.snap)
	with := 0
	for i, cl := range clusters {
		want := newBackendChecks(p.snap, 0).of(cl)
		if diff := cmp.Diff(want, got[i]); diff != "" {
			t.Fatalf("cluster %s (-alone +split):\n%s", cl.Name, diff)
		}
		if len(want) > 0 {
			with++
		}
	}
	if with == 0 {
		t.Fatal("no cluster has a problem: the test proves nothing")
	}
}
