package pipeline

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/churn"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
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
			r := startChurn(t, seed)
			p, cache, mirror := r.p, r.cache, r.mirror
			for step := range steps {
				changes, _, _ := r.m.Step()
				r.settle(t, changes)
				fresh, freshCache := newPipeline(newClock())
				if _, err := fresh.Apply(SnapshotChanges(mirror)); err != nil {
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

func sameCaches(t *testing.T, got, want *xdscache.Cache, when string) bool {
	t.Helper()
	ok := true
	for _, g := range xdsres.Groups {
		for _, typ := range xdsres.TypesOf(g) {
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

func byNameOf(rs []*xdsres.Resource) map[string]*xdsres.Resource {
	m := map[string]*xdsres.Resource{}
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

// churnRun is a pipeline that built a generated set, and a mutator of a
// mirror of its snapshot.
type churnRun struct {
	p      *Pipeline
	cache  *xdscache.Cache
	c      *clock
	mirror *objects.Snapshot
	m      *churn.Mutator
}

func startChurn(t *testing.T, seed int64) *churnRun {
	t.Helper()
	return startChurnWith(t, seed, newPipeline)
}

// startChurnWith is startChurn on a pipeline made by newP.
func startChurnWith(t *testing.T, seed int64, newP func(*clock) (*Pipeline, *xdscache.Cache)) *churnRun {
	t.Helper()
	set, err := scalegen.Generate(scalegen.Config{
		Proxies: 30, RoutesPerProxy: 2, ServicesPerRoute: 2, EndpointsPerService: 3,
		Zones: 2, TLSFraction: 0.6, Seed: seed, TeamSize: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &churnRun{c: newClock(), mirror: set.Snapshot()}
	r.p, r.cache = newP(r.c)
	if _, err := r.p.Apply(set.Changes()); err != nil {
		t.Fatal(err)
	}
	r.m = churn.New(seed, r.mirror)
	return r
}

// settle applies a batch a second after the last and lets its staging
// finish.
func (r *churnRun) settle(t *testing.T, changes []objects.Change) {
	t.Helper()
	r.c.add(time.Second)
	if _, err := r.p.Apply(changes); err != nil {
		t.Fatal(err)
	}
	r.c.add(DefaultLinger + DefaultWarmup)
	if _, err := r.p.Tick(); err != nil {
		t.Fatal(err)
	}
}
