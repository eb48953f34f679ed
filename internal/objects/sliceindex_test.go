package objects

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func sliceIn(ns, name, svc string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{ServiceNameLabel: svc}}}
}

// colliding returns an empty snapshot whose slice index hashes every
// Service alike.
func colliding() *Snapshot {
	s := NewSnapshot()
	s.slicesByService.hash = func(types.NamespacedName) uint64 { return 0 }
	return s
}

// slicesOf is what SlicesFor must return: the slices of svc in the
// snapshot, sorted by name, nil for none.
func slicesOf(s *Snapshot, svc types.NamespacedName) []*EndpointSlice {
	var out []*EndpointSlice
	for _, es := range s.EndpointSlices {
		if es.Namespace == svc.Namespace && es.Service == svc.Name {
			out = append(out, es)
		}
	}
	slices.SortFunc(out, func(a, b *EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func checkSlicesFor(t *testing.T, s *Snapshot, svcs []types.NamespacedName) {
	t.Helper()
	for _, svc := range svcs {
		if got, want := s.SlicesFor(svc), slicesOf(s, svc); !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("SlicesFor(%v) = %v, want %v", svc, got, want)
		}
	}
}

// TestSliceIndexCollisions drives a snapshot whose Services all hash
// alike, and one as made, through random upserts, moves and deletes of
// slices of Services that share namespaces, Service names and slice
// names, and checks that each Service's slices are its own, by name.
func TestSliceIndexCollisions(t *testing.T) {
	var svcs []types.NamespacedName
	for _, ns := range []string{"a", "b"} {
		for _, name := range []string{"x", "y", "z"} {
			svcs = append(svcs, types.NamespacedName{Namespace: ns, Name: name})
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	made, all := NewSnapshot(), colliding()
	var objs []runtime.Object
	for step := range 3000 {
		ns, name := []string{"a", "b"}[rng.IntN(2)], fmt.Sprint("s-", rng.IntN(8))
		if rng.IntN(3) == 0 {
			key := Key{Kind: KindEndpointSlice, Namespace: ns, Name: name}
			made.Delete(key)
			all.Delete(key)
			continue
		}
		es := sliceIn(ns, name, svcs[rng.IntN(3)].Name)
		objs = append(objs, es)
		for _, s := range []*Snapshot{made, all} {
			if _, err := s.Upsert(es); err != nil {
				t.Fatal(err)
			}
		}
		checkSlicesFor(t, made, svcs)
		checkSlicesFor(t, all, svcs)
		if t.Failed() {
			t.Fatalf("step %d went wrong", step)
		}
	}
	if len(all.slicesByService.m) != 1 {
		t.Fatalf("the Services are under %d hashes, want one", len(all.slicesByService.m))
	}
	bulk, err := fillSnapshot(colliding(), objs)
	if err != nil {
		t.Fatal(err)
	}
	checkSlicesFor(t, bulk, svcs)
}

// TestSlicesForShares checks that SlicesFor returns the index's own list,
// or a part of it when Services collide, without allocating, and that
// appending to what it returned cannot change another Service's slices.
func TestSlicesForShares(t *testing.T) {
	for name, s := range map[string]*Snapshot{"made": NewSnapshot(), "colliding": colliding()} {
		for _, es := range []*discoveryv1.EndpointSlice{sliceIn("ns", "a-1", "a"), sliceIn("ns", "a-2", "a"), sliceIn("ns", "b-1", "b")} {
			if _, err := s.Upsert(es); err != nil {
				t.Fatal(err)
			}
		}
		a := types.NamespacedName{Namespace: "ns", Name: "a"}
		if n := testing.AllocsPerRun(10, func() { s.SlicesFor(a) }); n != 0 {
			t.Errorf("%s: SlicesFor allocates %v times", name, n)
		}
		b := types.NamespacedName{Namespace: "ns", Name: "b"}
		_ = append(s.SlicesFor(a), nil)
		if got := s.SlicesFor(b); len(got) != 1 || got[0] == nil {
			t.Errorf("%s: SlicesFor(b) lost its slice after appending to a's", name)
		}
	}
}
