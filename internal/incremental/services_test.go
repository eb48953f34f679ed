package incremental

import (
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
