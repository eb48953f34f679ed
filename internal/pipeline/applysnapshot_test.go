package pipeline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestApplySnapshotSameAsApply: a pipeline made with a snapshot
// (Config.Snapshot) and built with ApplySnapshot serves every group, and
// reports, what one that applies the same objects to a snapshot of its own
// does, on a generated set and on every case of the gate's catalogue;
// the snapshot it was given is left as it was.
func TestApplySnapshotSameAsApply(t *testing.T) {
	set, err := scalegen.Generate(scalegen.Config{
		Proxies: 30, RoutesPerProxy: 2, ServicesPerRoute: 2, EndpointsPerService: 3,
		Zones: 2, TLSFraction: 0.6, Seed: 3, TeamSize: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	sameAsApplied(t, set.Snapshot(), Config{Translator: translator.DefaultOptions()})
	for _, c := range append(objectCases(), dagCases(t)...) {
		t.Run(c.name, func(t *testing.T) {
			snap := objects.NewSnapshot()
			for _, ch := range upserts(t, append(catalogueBase(t), c.objs...)...) {
				if err := snap.Apply(ch); err != nil {
					t.Fatal(err)
				}
			}
			cfg := catalogueOptions(c, newClock())
			cfg.Translator.KeepUnusableEndpoints = true
			sameAsApplied(t, snap, cfg)
		})
	}
}

func sameAsApplied(t *testing.T, snap *objects.Snapshot, cfg Config) {
	t.Helper()
	changes := SnapshotChanges(snap)
	applied := New(nil, cfg)
	if _, err := applied.Apply(changes); err != nil && !strings.Contains(err.Error(), "UTF-8") {
		t.Fatal(err)
	}
	cfg.Snapshot = snap
	given := New(nil, cfg)
	if _, err := given.ApplySnapshot(); err != nil && !strings.Contains(err.Error(), "UTF-8") {
		t.Fatal(err)
	}
	n := 0
	for _, g := range xdsres.Groups {
		for _, typ := range xdsres.TypesOf(g) {
			want := applied.Served(g)[typ]
			for name, r := range given.Served(g)[typ].All() {
				if w := want.Get(name); w == nil || !bytes.Equal(w.Any.Value, r.Any.Value) {
					t.Errorf("%s %s %s is served from the given snapshot, but not so from one applied", g, typ, name)
				}
				n++
			}
			if want.Len() != given.Served(g)[typ].Len() {
				t.Errorf("%s %s: %d served from the given snapshot, %d from one applied", g, typ, given.Served(g)[typ].Len(), want.Len())
			}
		}
	}
	if n == 0 {
		t.Error("nothing served")
	}
	if diff := cmp.Diff(applied.Statuses(), given.Statuses()); diff != "" {
		t.Errorf("statuses (-applied +given):\n%s", diff)
	}
	if a, b := rejections(applied), rejections(given); a != b {
		t.Errorf("withheld when applied:\n%s\nfrom the given snapshot:\n%s", a, b)
	}
	if again := SnapshotChanges(snap); !cmp.Equal(keysOf(again), keysOf(changes)) {
		t.Error("the given snapshot changed")
	}
}

func keysOf(changes []objects.Change) map[objects.Key]any {
	out := map[objects.Key]any{}
	for _, c := range changes {
		out[c.Key] = c.Object
	}
	return out
}
