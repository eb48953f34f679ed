package incremental

import (
	"slices"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestDepIndexChecksHashCollisions puts a unit under the hash of a key it
// did not read, as a collision would, and checks that a lookup reports
// only the units that read the key, each once, and that removing one key
// of a unit listed twice under a hash keeps the other.
func TestDepIndexChecksHashCollisions(t *testing.T) {
	k1 := objects.Key{Kind: objects.KindService, Namespace: "a", Name: "one"}
	k2 := objects.Key{Kind: objects.KindService, Namespace: "b", Name: "two"}
	deps := map[string][]objects.Key{"r1": {k1}, "r2": {k2}, "r3": {k1, k2}}
	d := newDepIndex(func(u unit) []objects.Key { return deps[u.(string)] })
	found := func(k objects.Key) []string {
		var out []string
		d.eachExact(k, func(u unit) { out = append(out, u.(string)) })
		slices.Sort(out)
		return out
	}
	// r2 read k2 only; listing it under k1's hash with r1 is what a
	// collision of the two keys' hashes would do.
	d.many[d.hash(k1)] = &readers{few: []unit{"r1", "r2"}}
	if got := found(k1); !slices.Equal(got, []string{"r1"}) {
		t.Errorf("readers of k1 = %v, want [r1]", got)
	}
	// r3 read both keys; if they hashed alike it is listed twice.
	d.many[d.hash(k1)].add("r3")
	d.many[d.hash(k1)].add("r3")
	if got := found(k1); !slices.Equal(got, []string{"r1", "r3"}) {
		t.Errorf("readers of k1 = %v, want [r1 r3]", got)
	}
	d.remove("r3", []objects.Key{k1})
	if got := found(k1); !slices.Equal(got, []string{"r1", "r3"}) {
		t.Errorf("after removing one of r3's two entries, readers of k1 = %v, want [r1 r3]", got)
	}
}

// TestDepIndexAddRemove goes from one reader to many and back.
func TestDepIndexAddRemove(t *testing.T) {
	k := objects.Key{Kind: objects.KindSecret, Namespace: "a", Name: "cert"}
	d := newDepIndex(func(unit) []objects.Key { return []objects.Key{k} })
	count := func() int {
		n := 0
		d.each(k, func(unit) { n++ })
		return n
	}
	for i := range 3 * manyReaders {
		d.add(i, []objects.Key{k})
		if got := count(); got != i+1 {
			t.Fatalf("after %d adds, %d readers", i+1, got)
		}
	}
	for i := range 3 * manyReaders {
		d.remove(i, []objects.Key{k})
		if got := count(); got != 3*manyReaders-i-1 {
			t.Fatalf("after %d removes, %d readers", i+1, got)
		}
	}
	if len(d.one)+len(d.many) != 0 {
		t.Errorf("an empty index holds %d one and %d many", len(d.one), len(d.many))
	}
}
