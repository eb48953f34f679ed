package pipeline

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/churn"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// TestIncrementalCacheEqualsFullBuild applies random sequences of changes
// through one pipeline and, once each step's staging has settled, compares
// what its cache serves in every group, and the statuses, with a new
// pipeline that builds the same objects from scratch.
func TestIncrementalCacheEqualsFullBuild(t *testing.T) {
	seeds, steps := 3, 120
	if testing.Short() {
		seeds, steps = 1, 40
	}
	for seed := range int64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			set, err := scalegen.Generate(scalegen.Config{
				Proxies: 30, RoutesPerProxy: 2, ServicesPerRoute: 2, EndpointsPerService: 3,
				Zones: 2, TLSFraction: 0.6, Seed: seed, TeamSize: 10,
			})
			if err != nil {
				t.Fatal(err)
			}
			c := newClock()
			p, cache := newPipeline(c)
			if _, err := p.Apply(set.Changes()); err != nil {
				t.Fatal(err)
			}
			mirror := set.Snapshot()
			m := churn.New(seed, mirror)
			for step := range steps {
				changes, _, _ := m.Step()
				c.add(time.Second)
				if _, err := p.Apply(changes); err != nil {
					t.Fatal(err)
				}
				c.add(DefaultLinger + DefaultWarmup)
				if _, err := p.Tick(); err != nil {
					t.Fatal(err)
				}
				fresh, freshCache := newPipeline(newClock())
				if _, err := fresh.Apply(all(mirror)); err != nil {
					t.Fatal(err)
				}
				if !sameCaches(t, cache, freshCache, fmt.Sprintf("step %d", step)) {
					return
				}
				if diff := cmp.Diff(fresh.Statuses(), p.Statuses()); diff != "" {
					t.Fatalf("step %d: statuses (-full +incremental):\n%s", step, diff)
				}
			}
		})
	}
}

// all lists a snapshot's objects as one batch of upserts.
func all(snap *objects.Snapshot) []objects.Change {
	var out []objects.Change
	add := func(k objects.Key, o runtime.Object) { out = append(out, objects.Change{Key: k, Object: o}) }
	for nn, o := range snap.HTTPProxies {
		add(objects.NewKey(objects.KindHTTPProxy, nn), o)
	}
	for nn, o := range snap.ExtensionServices {
		add(objects.NewKey(objects.KindExtensionService, nn), o)
	}
	for nn, o := range snap.Delegations {
		add(objects.NewKey(objects.KindTLSCertificateDelegation, nn), o)
	}
	for nn, o := range snap.Services {
		add(objects.NewKey(objects.KindService, nn), o)
	}
	for nn, o := range snap.EndpointSlices {
		add(objects.NewKey(objects.KindEndpointSlice, nn), o)
	}
	for nn, o := range snap.Secrets {
		add(objects.NewKey(objects.KindSecret, nn), o)
	}
	for name, o := range snap.Nodes {
		add(objects.Key{Kind: objects.KindNode, Name: name}, o)
	}
	return out
}

func sameCaches(t *testing.T, got, want *xdscache.Cache, when string) bool {
	t.Helper()
	ok := true
	for _, g := range xdscache.Groups {
		for _, typ := range xdscache.TypesOf(g) {
			w := byNameOf(want.Resources(g, typ))
			for name, r := range byNameOf(got.Resources(g, typ)) {
				if x := w[name]; x == nil {
					t.Errorf("%s: %s %s %s is served but a full build has no such resource", when, g, typ, name)
					ok = false
				} else if !bytes.Equal(x.Any.Value, r.Any.Value) {
					t.Errorf("%s: %s %s %s differs from a full build", when, g, typ, name)
					ok = false
				}
				delete(w, name)
			}
			for name := range w {
				t.Errorf("%s: %s %s %s is missing", when, g, typ, name)
				ok = false
			}
			if a, b := got.Version(g, typ), want.Version(g, typ); a != b {
				t.Errorf("%s: %s %s version %s, a full build has %s", when, g, typ, a, b)
				ok = false
			}
		}
	}
	return ok
}

func byNameOf(rs []*xdscache.Resource) map[string]*xdscache.Resource {
	m := map[string]*xdscache.Resource{}
	for _, r := range rs {
		m[r.Name] = r
	}
	return m
}

// TestNextWaitsForColdClusters checks that a route configuration that
// keeps one cluster and gains another is due when the new one has warmed
// up, not at once: Next drives the serve loop's timer.
func TestNextWaitsForColdClusters(t *testing.T) {
	c := newClock()
	p, _ := newPipeline(c)
	two := proxy(60, 40)
	two.Spec.Routes = append(two.Spec.Routes, two.Spec.Routes[0])
	two.Spec.Routes[1].Conditions = nil
	two.Spec.Routes[0].Conditions = []switchyardv1.MatchCondition{{Prefix: "/a"}}
	if _, err := p.Apply(upserts(t, svc("a"), svc("b"), slice("a", "10.0.0.1"), slice("b", "10.0.0.2"), two)); err != nil {
		t.Fatal(err)
	}
	c.add(time.Second)
	edited := two.DeepCopy()
	w := int64(90)
	edited.Spec.Routes[0].Services[0].Weight = &w
	res, err := p.Apply(upserts(t, edited))
	if err != nil {
		t.Fatal(err)
	}
	if want := c.now().Add(DefaultWarmup); !res.Next.Equal(want) {
		t.Fatalf("next step at %v, want %v (when the new cluster is warm)", res.Next, want)
	}
}
