package pipeline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestNoCacheSameAsServed: a pipeline without a cache (render's) stages
// and publishes nothing, but gates every group's build as one with a
// cache does. After the same batches, once staging has settled, what it
// serves each group (Served) is what the other's cache holds, byte for
// byte, in every gateway; its statuses and what it withholds are the
// same. The builds cover the gate's catalogue of bad inputs, in the first
// build and added later, random churn, and further gateways.
func TestNoCacheSameAsServed(t *testing.T) {
	for _, c := range append(objectCases(), dagCases(t)...) {
		t.Run(c.name, func(t *testing.T) { sameOnCase(t, c, false) })
		// A translator that emits the endpoints clients reject gives the
		// gate something to withhold (newUncheckedPipeline).
		t.Run(c.name+"/unchecked", func(t *testing.T) { sameOnCase(t, c, true) })
	}
	t.Run("churn", func(t *testing.T) {
		// One generated set for both: its keys are made afresh each time.
		withRun := startChurn(t, 7)
		withoutRun := &churnRun{c: newClock()}
		withoutRun.p = New(nil, Config{Translator: translator.DefaultOptions(), Now: withoutRun.c.now})
		if _, err := withoutRun.p.Apply(SnapshotChanges(withRun.mirror)); err != nil {
			t.Fatal(err)
		}
		sameAsCached(t, withoutRun.p, withRun.p, withRun.cache, "first build")
		for step := range 30 {
			changes, _, _ := withRun.m.Step()
			withRun.settle(t, changes)
			withoutRun.settle(t, changes)
			sameAsCached(t, withoutRun.p, withRun.p, withRun.cache, fmt.Sprintf("step %d", step))
		}
	})
	t.Run("gateways", func(t *testing.T) {
		cfg := Config{Translator: translator.DefaultOptions(), Gateways: []string{"edge-a", "edge-b"}}
		cache := xdscache.New()
		with, without := New(cache, cfg), New(nil, cfg)
		var changes []objects.Change
		for i, class := range []string{"", "edge-a", "edge-b"} {
			px := proxy(1)
			px.Name, px.Spec.IngressClassName, px.Spec.VirtualHost.Fqdn = fmt.Sprint("p", i), class, fmt.Sprint("p", i, ".example.com")
			changes = append(changes, upserts(t, svc("a"), px)...)
		}
		for _, p := range []*Pipeline{with, without} {
			if _, err := p.Apply(changes); err != nil {
				t.Fatal(err)
			}
		}
		sameAsCached(t, without, with, cache, "first build")
		for _, gw := range cfg.Gateways {
			sameAsCached(t, without.Gateway(gw), with.Gateway(gw), cache.Gateway(gw), "gateway "+gw)
		}
	})
}

// sameOnCase builds a catalogue case with a cache and without: first with
// the valid input, then removed, then added again.
func sameOnCase(t *testing.T, c gateCase, unchecked bool) {
	clk := newClock()
	cfg := catalogueOptions(c, clk)
	cfg.Translator.KeepUnusableEndpoints = unchecked
	cache := xdscache.New()
	with, without := New(cache, cfg), New(nil, cfg)
	both := func(when string, changes []objects.Change) {
		clk.add(DefaultLinger + DefaultWarmup)
		for _, p := range []*Pipeline{with, without} {
			if _, err := p.Apply(changes); err != nil && !strings.Contains(err.Error(), "UTF-8") {
				t.Fatal(err)
			}
		}
		clk.add(DefaultLinger + DefaultWarmup)
		if _, err := with.Tick(); err != nil {
			t.Fatal(err)
		}
		sameAsCached(t, without, with, cache, when)
	}
	both("first build", upserts(t, append(catalogueBase(t), c.objs...)...))
	both("case removed", deletes(c.objs))
	both("case added", upserts(t, c.objs...))
}

// deletes lists the deletion of every object.
func deletes(objs []runtime.Object) []objects.Change {
	var out []objects.Change
	for _, o := range objs {
		if k, err := objects.KeyOf(o); err == nil {
			out = append(out, objects.Change{Key: k})
		}
	}
	return out
}

// sameAsCached checks that what p serves every group is what cache (fed
// by other) holds, and that both report the same statuses and
// withhold the same resources.
func sameAsCached(t *testing.T, p, other *Pipeline, cache *xdscache.Cache, when string) {
	t.Helper()
	n := 0
	for _, g := range xdsres.Groups {
		for _, typ := range xdsres.TypesOf(g) {
			want := byNameOf(cache.Resources(g, typ))
			for name, r := range p.Served(g)[typ].All() {
				if w := want[name]; w == nil || !bytes.Equal(w.Any.Value, r.Any.Value) {
					t.Errorf("%s: %s %s %s is served without a cache, but not so with one", when, g, typ, name)
				}
				delete(want, name)
				n++
			}
			for name := range want {
				t.Errorf("%s: %s %s %s is in the cache, but not served without one", when, g, typ, name)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: nothing served", when)
	}
	if diff := cmp.Diff(other.Statuses(), p.Statuses()); diff != "" {
		t.Errorf("%s: statuses (-with a cache +without):\n%s", when, diff)
	}
	if a, b := rejections(other), rejections(p); a != b {
		t.Errorf("%s: withheld with a cache:\n%s\nwithout:\n%s", when, a, b)
	}
}

func rejections(p *Pipeline) string {
	var b strings.Builder
	for _, rj := range p.Rejected() {
		fmt.Fprintf(&b, "%s %s %s: %v %v\n", rj.Group, rj.Type, rj.Name, rj.Err, rj.Hosts)
	}
	return b.String()
}
