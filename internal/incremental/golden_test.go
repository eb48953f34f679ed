package incremental_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/golden"
	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestGoldenThroughEngine builds every golden case of the translator
// through the engine, the path `serve` runs, instead of the one-shot
// translation `render` and the translator's golden test use: all objects
// in one update; one object per update, in key order and in reverse; then
// deleted one per update. Whenever every object is present, each group's
// output must print exactly as its golden file and every resource must
// encode to the bytes the one-shot translation encodes to; in between,
// each group must pass xdscheck.Check, and the deltas the engine returns
// must add up to what it holds. With every object deleted, the engine
// holds what it holds for an empty snapshot: Envoy's plain-HTTP listener,
// which is always there, and nothing else.
func TestGoldenThroughEngine(t *testing.T) {
	cases, _, err := golden.Dirs(filepath.Join("..", "translator", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases under ../translator/testdata")
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c, err := golden.Load(dir, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cfg := incremental.Config{DAG: c.DAG, Translator: c.Translator}
			keys := keysOf(c.Snapshot)

			all := newRun(t, cfg)
			all.update(c.Snapshot, keys...)
			all.matchGolden(c, "all objects in one update")

			forward := newRun(t, cfg)
			for i, k := range keys {
				forward.update(c.Snapshot, k)
				forward.check(fmt.Sprintf("forward, %d of %d objects", i+1, len(keys)))
			}
			forward.matchGolden(c, "one object per update")

			reverse := newRun(t, cfg)
			for i, k := range slices.Backward(keys) {
				reverse.update(c.Snapshot, k)
				reverse.check(fmt.Sprintf("reverse, %d of %d objects", len(keys)-i, len(keys)))
			}
			reverse.matchGolden(c, "one object per update, in reverse")

			for i, k := range keys {
				forward.delete(k)
				forward.check(fmt.Sprintf("deleting, %d of %d deleted", i+1, len(keys)))
			}
			forward.matchEmpty()
		})
	}
}

// keysOf lists every object of a snapshot, in key order.
func keysOf(s *objects.Snapshot) []objects.Key {
	var keys []objects.Key
	add := func(kind objects.Kind, nn types.NamespacedName) { keys = append(keys, objects.NewKey(kind, nn)) }
	for nn := range s.HTTPProxies {
		add(objects.KindHTTPProxy, nn)
	}
	for nn := range s.ExtensionServices {
		add(objects.KindExtensionService, nn)
	}
	for nn := range s.Delegations {
		add(objects.KindTLSCertificateDelegation, nn)
	}
	for nn := range s.Services {
		add(objects.KindService, nn)
	}
	for nn := range s.EndpointSlices {
		add(objects.KindEndpointSlice, nn)
	}
	for nn := range s.Secrets {
		add(objects.KindSecret, nn)
	}
	for name := range s.Nodes {
		add(objects.KindNode, types.NamespacedName{Name: name})
	}
	for name := range s.Namespaces {
		add(objects.KindNamespace, types.NamespacedName{Name: name})
	}
	for nn := range s.TrafficSplits {
		add(objects.KindTrafficSplit, nn)
	}
	for nn := range s.HTTPRouteGroups {
		add(objects.KindHTTPRouteGroup, nn)
	}
	for nn := range s.TrafficTargets {
		add(objects.KindTrafficTarget, nn)
	}
	for nn := range s.Pods {
		add(objects.KindPod, nn)
	}
	slices.SortFunc(keys, objects.Key.Compare)
	return keys
}

// run is an engine fed one batch at a time, as the pipeline feeds it, and
// what a consumer following its deltas holds.
type run struct {
	t    *testing.T
	cfg  incremental.Config
	snap *objects.Snapshot
	e    *incremental.Engine
	// followed is, per group, what applying every delta gives.
	followed map[xdsres.Group]incremental.Targets
}

func newRun(t *testing.T, cfg incremental.Config) *run {
	snap := objects.NewSnapshot()
	return &run{t: t, cfg: cfg, snap: snap, e: incremental.New(snap, cfg), followed: map[xdsres.Group]incremental.Targets{}}
}

// update copies the objects of keys from src into the run's snapshot and
// tells the engine, with the endpoint scope the pipeline would compute.
func (r *run) update(src *objects.Snapshot, keys ...objects.Key) {
	r.t.Helper()
	var changes []objects.Change
	for _, k := range keys {
		changes = append(changes, objects.Change{Key: k, Object: src.Get(k)})
	}
	r.apply(changes)
}

func (r *run) delete(k objects.Key) {
	r.t.Helper()
	r.apply([]objects.Change{{Key: k}})
}

func (r *run) apply(changes []objects.Change) {
	r.t.Helper()
	ch := incremental.Changes{Endpoints: map[types.NamespacedName]bool{}}
	for _, c := range changes {
		ch.Objects = append(ch.Objects, c.Key)
		if r.snap.EndpointScope(c, ch.Endpoints) {
			ch.AllEndpoints = true
		}
		if err := r.snap.Apply(c); err != nil {
			r.t.Fatal(err)
		}
	}
	d, err := r.e.Update(ch)
	if err != nil {
		r.t.Fatal(err)
	}
	r.follow(d)
}

// follow applies a delta to what a consumer holds.
func (r *run) follow(d *incremental.Delta) {
	for _, g := range xdsres.Groups {
		if d.All {
			r.followed[g] = incremental.Targets{}
			for typ, byName := range r.e.Targets(g) {
				r.followed[g][typ] = xdsres.SetOf(byName.Map())
			}
			continue
		}
		for typ, byName := range d.Changes[g] {
			for name, c := range byName {
				if c.New == nil {
					r.followed[g][typ].Delete(name)
					continue
				}
				if r.followed[g][typ] == nil {
					r.followed[g][typ] = xdsres.NewSet(0)
				}
				r.followed[g][typ].Put(name, c.New)
			}
		}
	}
}

// output is a group's resources as render prints them: by type URL, in
// name order, decoded from the bytes the engine would send.
func (r *run) output(g xdsres.Group) *render.Output {
	r.t.Helper()
	out := &render.Output{Resources: map[string][]proto.Message{}, Statuses: r.e.Statuses()}
	for typ, byName := range r.e.Targets(g) {
		for _, name := range slices.Sorted(maps.Keys(byName.Map())) {
			m := byName.Get(name).Decoded()
			if m == nil {
				r.t.Fatalf("%s %s %s does not decode", g, typ, name)
			}
			out.Resources[typ] = append(out.Resources[typ], m)
		}
	}
	return out
}

// check runs xdscheck.Check on every group and compares what the deltas
// add up to with what the engine holds.
func (r *run) check(when string) {
	r.t.Helper()
	for _, g := range xdsres.Groups {
		res, err := golden.Resources(r.output(g).Resources)
		if err != nil {
			r.t.Fatalf("%s: %s: %v", when, g, err)
		}
		for _, err := range xdscheck.Check(g, res) {
			r.t.Errorf("%s: %s: %v", when, g, err)
		}
		if diff := cmp.Diff(versions(r.e.Targets(g)), versions(r.followed[g])); diff != "" {
			r.t.Errorf("%s: %s: following the deltas does not give what the engine holds (-engine +followed):\n%s", when, g, diff)
		}
	}
}

// matchGolden checks every group against the case's golden file, and each
// resource's bytes against the one-shot translation's.
func (r *run) matchGolden(c *golden.Case, when string) {
	r.t.Helper()
	r.check(when)
	for _, name := range c.Groups() {
		g := xdsres.Group(name)
		got, err := c.Document(r.output(g))
		if err != nil {
			r.t.Fatal(err)
		}
		want, err := os.ReadFile(c.Path(string(g)))
		if err != nil {
			r.t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			d := cmp.Diff(string(want), string(got))
			r.t.Errorf("%s: %s differs from what the engine gives (-golden +engine):\n%s", when, c.Path(string(g)), d)
		}
		oneShot, err := render.Run(c.Snapshot, render.Options{DAG: c.DAG, Translator: c.Translator, Group: g})
		if err != nil {
			r.t.Fatal(err)
		}
		r.sameBytes(g, oneShot, when)
	}
}

// sameBytes compares the engine's encoded resources with the encoding of
// the one-shot translation, resource by resource.
func (r *run) sameBytes(g xdsres.Group, oneShot *render.Output, when string) {
	r.t.Helper()
	held := r.e.Targets(g)
	n := 0
	for typ, msgs := range oneShot.Resources {
		for _, m := range msgs {
			want, err := xdsres.Encode(m)
			if err != nil {
				r.t.Fatal(err)
			}
			n++
			switch got := held[typ].Get(want.Name); {
			case got == nil:
				r.t.Errorf("%s: %s %s %s: the engine does not have it", when, g, typ, want.Name)
			case !bytes.Equal(got.Any.GetValue(), want.Any.GetValue()) || got.Version != want.Version:
				r.t.Errorf("%s: %s %s %s: the engine's encoding differs from the one-shot translation's", when, g, typ, want.Name)
			}
		}
	}
	if held := count(held); held != n {
		r.t.Errorf("%s: %s: the engine holds %d resources, the one-shot translation gives %d", when, g, held, n)
	}
}

// matchEmpty checks that, every object deleted, the engine holds what a
// fresh engine builds from an empty snapshot, and no status.
func (r *run) matchEmpty() {
	r.t.Helper()
	empty := incremental.New(objects.NewSnapshot(), r.cfg)
	if _, err := empty.Update(incremental.Changes{}); err != nil {
		r.t.Fatal(err)
	}
	for _, g := range xdsres.Groups {
		if diff := cmp.Diff(versions(empty.Targets(g)), versions(r.e.Targets(g))); diff != "" {
			r.t.Errorf("every object deleted, %s still holds (-empty snapshot +after deleting):\n%s", g, diff)
		}
	}
	if sts := r.e.Statuses(); len(sts) > 0 {
		r.t.Errorf("every object deleted, the engine still has %d statuses, the first of %s", len(sts), sts[0].Key)
	}
}

// versions maps type URL and name to version: enough to compare two sets
// of resources, as versions are hashes of the encoding.
func versions(t incremental.Targets) map[string]map[string]string {
	out := map[string]map[string]string{}
	for typ, byName := range t {
		for name, res := range byName.All() {
			if out[typ] == nil {
				out[typ] = map[string]string{}
			}
			out[typ][name] = res.Version
		}
	}
	return out
}

func count(t incremental.Targets) int {
	n := 0
	for _, byName := range t {
		n += byName.Len()
	}
	return n
}
