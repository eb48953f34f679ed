package incremental

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func collect(x *serviceIndex, svc types.NamespacedName) []*clusterEntry {
	var out []*clusterEntry
	x.each(svc, func(ce *clusterEntry) { out = append(out, ce) })
	return out
}

func TestServiceIndexAddRemove(t *testing.T) {
	a, b := types.NamespacedName{Namespace: "n", Name: "a"}, types.NamespacedName{Namespace: "n", Name: "b"}
	one := &clusterEntry{services: []types.NamespacedName{a}}
	two := &clusterEntry{services: []types.NamespacedName{a, b}}
	x := newServiceIndex(0)
	x.add(a, one)
	x.add(a, two)
	x.add(b, two)
	if got := collect(&x, a); len(got) != 2 || got[0] != one || got[1] != two {
		t.Fatalf("a lists %v, want [one two]", got)
	}
	if got := collect(&x, b); len(got) != 1 || got[0] != two {
		t.Fatalf("b lists %v, want [two]", got)
	}
	x.remove(a, one)
	if got := collect(&x, a); len(got) != 1 || got[0] != two {
		t.Fatalf("a lists %v after removing one, want [two]", got)
	}
	x.remove(a, two)
	x.remove(b, two)
	if x.len() != 0 || len(collect(&x, a)) != 0 {
		t.Fatalf("index holds %d hashes after removing all, want 0", x.len())
	}
}

// Two Services that hash alike share a list; each still yields only its
// own clusters, and a cluster of both once.
func TestServiceIndexChecksHashCollisions(t *testing.T) {
	a, b := types.NamespacedName{Namespace: "n", Name: "a"}, types.NamespacedName{Namespace: "m", Name: "b"}
	ofA := &clusterEntry{services: []types.NamespacedName{a}}
	ofB := &clusterEntry{services: []types.NamespacedName{b}}
	ofBoth := &clusterEntry{services: []types.NamespacedName{a, b}}
	x := newServiceIndex(0)
	h := x.hash(a) // b is made to hash as a
	x.addHash(h, ofB)
	if got := collect(&x, a); len(got) != 0 {
		t.Fatalf("a lists %v, want none: only b's cluster is under its hash", got)
	}
	x.addHash(h, ofA)
	x.addHash(h, ofBoth)
	x.addHash(h, ofBoth)
	if got := collect(&x, a); len(got) != 2 || got[0] != ofA || got[1] != ofBoth {
		t.Fatalf("a lists %v, want [ofA ofBoth]", got)
	}
	x.removeHash(h, ofBoth)
	if got := collect(&x, a); len(got) != 2 {
		t.Fatalf("a lists %v after one of ofBoth's two entries went, want it still", got)
	}
	x.removeHash(h, ofBoth)
	x.removeHash(h, ofA)
	if got := collect(&x, a); len(got) != 0 || x.len() != 1 {
		t.Fatalf("a lists %v and %d hashes are held, want none and b's", got, x.len())
	}
}

// listed is what the index holds under h, in its order.
func listed(x *serviceIndex, h uint64) []*clusterEntry {
	if ce, ok := x.one.get(h); ok {
		return []*clusterEntry{ce}
	}
	return x.more[h]
}

// TestServiceIndexFollowsMap drives the index and a plain map of lists
// through the same random adds and removes, under the hashes of a few
// Services and under chosen hashes that share the first and the last home
// slots (0 among them), so that probing runs long, wraps round the table
// and deletion moves clusters back, and checks
// after every step that both hold the same lists and that each yields
// what the map's list does.
func TestServiceIndexFollowsMap(t *testing.T) {
	for _, presize := range []int{0, 40} {
		rng := rand.New(rand.NewPCG(1, uint64(presize)))
		x := newServiceIndex(presize)
		svcs := make([]types.NamespacedName, 6)
		var hashes []uint64
		for i := range svcs {
			svcs[i] = types.NamespacedName{Namespace: "n", Name: fmt.Sprint("s", i)}
			hashes = append(hashes, x.hash(svcs[i]))
		}
		for i := range uint64(12) {
			// The first and the last home slot in tables of up to 2^32
			// slots.
			hashes = append(hashes, i<<32, ^uint64(0)-i<<32)
		}
		clusters := make([]*clusterEntry, 12)
		for i := range clusters {
			clusters[i] = &clusterEntry{services: []types.NamespacedName{svcs[i%len(svcs)], svcs[(i*5)%len(svcs)]}}
		}
		model := map[uint64][]*clusterEntry{}
		for step := range 10000 {
			h, ce := hashes[rng.IntN(len(hashes))], clusters[rng.IntN(len(clusters))]
			// Adds win early, so that the table grows; later they
			// balance, so that it empties and fills again.
			if rng.IntN(100) < max(50, 90-step/50) {
				x.addHash(h, ce)
				model[h] = append(model[h], ce)
			} else {
				x.removeHash(h, ce)
				if model[h] = removeFirst(model[h], ce); len(model[h]) == 0 {
					delete(model, h)
				}
			}
			checkServiceIndex(t, &x, model, hashes, svcs)
			if t.Failed() {
				t.Fatalf("presize %d: step %d went wrong", presize, step)
			}
		}
	}
}

func checkServiceIndex(t *testing.T, x *serviceIndex, model map[uint64][]*clusterEntry, hashes []uint64, svcs []types.NamespacedName) {
	t.Helper()
	if x.len() != len(model) {
		t.Errorf("index holds %d hashes, map %d", x.len(), len(model))
	}
	for _, h := range hashes {
		if got, want := listed(x, h), model[h]; !slices.Equal(got, want) {
			t.Errorf("hash %#x lists %p, map %p", h, got, want)
		}
	}
	for _, svc := range svcs {
		var want []*clusterEntry
		for _, ce := range model[x.hash(svc)] {
			if slices.Contains(ce.services, svc) && !slices.Contains(want, ce) {
				want = append(want, ce)
			}
		}
		if got := collect(x, svc); !slices.Equal(got, want) {
			t.Errorf("%v yields %p, map %p", svc, got, want)
		}
	}
}
