package incremental

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestFirstBuildEqualsLaterBuild builds the same snapshot twice: as a
// first update, which takes shortcuts (roots added on two goroutines, no
// endpoint refresh, maps sized from the translations, nothing marked for
// the DAG), and as the second update of an engine whose first saw no
// object, which takes none of them. Both must give the same resources,
// byte for byte, the same statuses, the same DAG and the same owners, and
// both what a full build gives.
func TestFirstBuildEqualsLaterBuild(t *testing.T) {
	for seed := range int64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			set := testSet(t, seed)
			snap := set.Snapshot()
			keys := keysOfChanges(set.Changes())
			cfg := Config{Translator: translator.DefaultOptions()}
			cfg.DAG.ExternalNameServices = seed%2 == 0
			if seed%3 != 1 {
				cfg.DAG.FallbackCertificate = &fallbackCertificate
				keys = append(keys, enableFallback(snap)...)
			}
			if seed%3 == 2 {
				cfg.DAG.GlobalAuthorization = &types.NamespacedName{Namespace: "auth", Name: "authz-1"}
			}
			if seed%2 == 1 {
				cfg.DAG.Mesh = true
				keys = append(keys, addMesh(snap)...)
			}

			first := New(snap, cfg)
			if _, err := first.Update(Changes{Objects: keys}); err != nil {
				t.Fatal(err)
			}
			later := New(snap, cfg)
			if _, err := later.Update(Changes{}); err != nil {
				t.Fatal(err)
			}
			if _, err := later.Update(Changes{Objects: keys}); err != nil {
				t.Fatal(err)
			}
			sameBuild(t, first, later)
			compare(t, first, snap, cfg, "first update")
			compare(t, later, snap, cfg, "second update")
		})
	}
}

// sameBuild checks that two engines serve the same resources, statuses,
// DAG and owners.
func sameBuild(t *testing.T, a, b *Engine) {
	t.Helper()
	for _, g := range xdsres.Groups {
		for _, typ := range xdsres.TypesOf(g) {
			ra, rb := a.Targets(g)[typ], b.Targets(g)[typ]
			if ra.Len() != rb.Len() {
				t.Errorf("%s %s: %d resources, then %d", g, xdsres.ShortType(typ), ra.Len(), rb.Len())
			}
			for name, x := range ra.All() {
				y := rb.Get(name)
				if y == nil || !bytes.Equal(x.Any.Value, y.Any.Value) || x.Version != y.Version {
					t.Errorf("%s %s %s differs", g, xdsres.ShortType(typ), name)
					continue
				}
				if ox, oy := a.Owners(g, typ, name), b.Owners(g, typ, name); !slices.Equal(ox, oy) {
					t.Errorf("%s %s %s: owners %v, then %v", g, xdsres.ShortType(typ), name, ox, oy)
				}
			}
		}
	}
	if diff := cmp.Diff(a.Statuses(), b.Statuses()); diff != "" {
		t.Errorf("statuses (-first +later):\n%s", diff)
	}
	if !reflect.DeepEqual(a.DAG(), b.DAG()) {
		t.Errorf("the DAGs differ")
	}
	for _, st := range a.Statuses() {
		if pa, pb := a.Produced(st.Key), b.Produced(st.Key); !slices.Equal(pa, pb) {
			t.Errorf("%s: produced %v, then %v", st.Key, pa, pb)
		}
	}
}

// TestFirstBuildKeepsChainsOnce checks that after a first update every
// secure host's filter chain, as the listener and its root keep it, is
// the listener's own copy, and that a later update that changes every
// object still gives what a full build gives.
func TestFirstBuildKeepsChainsOnce(t *testing.T) {
	set := testSet(t, 3)
	snap := set.Snapshot()
	keys := keysOfChanges(set.Changes())
	cfg := Config{Translator: translator.DefaultOptions()}
	e := New(snap, cfg)
	if _, err := e.Update(Changes{Objects: keys}); err != nil {
		t.Fatal(err)
	}
	lis := e.Targets(xdsres.GroupEnvoy)[resource.ListenerType].Get(translator.HTTPSListenerName)
	if lis == nil || len(e.https.order) == 0 {
		t.Fatal("the set has no secure host")
	}
	within := func(b []byte) bool {
		v := lis.Any.Value
		start, end := uintptr(unsafe.Pointer(unsafe.SliceData(v))), uintptr(unsafe.Pointer(unsafe.SliceData(v)))+uintptr(len(v))
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return len(b) > 0 && p >= start && p+uintptr(len(b)) <= end
	}
	for _, fqdn := range e.https.order {
		if c := e.https.chains[fqdn]; !within(c) {
			t.Errorf("%s: the listener keeps a chain of its own", fqdn)
		}
		if out := e.claims.fqdn[fqdn][0].added.out; !within(out.chain) {
			t.Errorf("%s: the root keeps a chain of its own", fqdn)
		}
	}
	if _, err := e.Update(Changes{Objects: keys}); err != nil {
		t.Fatal(err)
	}
	compare(t, e, snap, cfg, "second update")
}
