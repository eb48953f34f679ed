package xdsres

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSetIsAMap makes random sets, replacements and deletions on a
// Set and a map side by side, a few of them under a name that is
// not the resource's, and checks that both hold the same after each.
func TestSetIsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s, want := NewSet(0), map[string]*Resource{}
	check := func(step int) {
		t.Helper()
		if s.Len() != len(want) {
			t.Fatalf("step %d: %d resources, want %d", step, s.Len(), len(want))
		}
		got := maps.Collect(s.All())
		if !maps.Equal(got, want) {
			t.Fatalf("step %d: the set lists %d resources, not the map's %d", step, len(got), len(want))
		}
		for name, r := range want {
			if x, ok := s.Lookup(name); !ok || x != r {
				t.Fatalf("step %d: Lookup(%q) = %v, %v", step, name, x, ok)
			}
			if x := s.GetHashed(name, Hash(name)); x != r {
				t.Fatalf("step %d: GetHashed(%q) = %v", step, name, x)
			}
		}
	}
	for step := range 4000 {
		name := fmt.Sprint("r", rng.IntN(600))
		switch op := rng.IntN(10); {
		case op < 6:
			r := &Resource{Name: name, Version: fmt.Sprint(step)}
			if op == 0 && rng.IntN(8) == 0 {
				r.Name = "other"
			}
			if rng.IntN(2) == 0 {
				s.PutHashed(name, Hash(name), r)
			} else {
				s.Put(name, r)
			}
			want[name] = r
		default:
			if rng.IntN(2) == 0 {
				s.DeleteHashed(name, Hash(name))
			} else {
				s.Delete(name)
			}
			delete(want, name)
		}
		if _, ok := s.Lookup("absent"); ok {
			t.Fatal("found a name never set")
		}
		if step%97 == 0 || step > 3900 {
			check(step)
		}
	}
	for name := range want {
		s.Delete(name)
		delete(want, name)
	}
	check(-1)
}

// TestNilSetIsEmpty holds a nil *Set to what a nil map gives: the gate and
// the stager read types a group may not have.
func TestNilSetIsEmpty(t *testing.T) {
	var s *Set
	if r, ok := s.Lookup("a"); r != nil || ok || s.Get("a") != nil || s.Len() != 0 {
		t.Fatalf("a nil set holds something: %v %v %d", r, ok, s.Len())
	}
	for name := range s.All() {
		t.Fatalf("a nil set yields %q", name)
	}
	s.Delete("a")
	if m := s.Map(); len(m) != 0 {
		t.Fatalf("a nil set's map holds %d", len(m))
	}
}

// TestSetOfHoldsTheMap checks SetOf and Map against each other, with a
// resource held under a name not its own.
func TestSetOfHoldsTheMap(t *testing.T) {
	want := map[string]*Resource{"a": {Name: "a"}, "b": {Name: "b"}, "alias": {Name: "c"}}
	got := SetOf(want).Map()
	if !maps.Equal(got, want) {
		t.Fatalf("SetOf(m).Map() = %v, want %v", got, want)
	}
	names := SetOf(want).Names()
	slices.Sort(names)
	if w := slices.Sorted(maps.Keys(want)); !slices.Equal(names, w) {
		t.Fatalf("Names() = %v, want %v", names, w)
	}
}

// BenchmarkSetGet looks up names in a set of 200,000 resources, the size
// of a group's targets at 10,000 roots, beside a map of the same: the
// gate looks every resource up several times in a first build.
func BenchmarkSetGet(b *testing.B) {
	const n = 200000
	names := make([]string, n)
	m := make(map[string]*Resource, n)
	for i := range names {
		names[i] = fmt.Sprintf("shop-%d/app-%d.example.com", i%977, i)
		m[names[i]] = &Resource{Name: names[i]}
	}
	s := SetOf(m)
	order := rand.New(rand.NewPCG(3, 4)).Perm(n)
	b.Run("set", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if s.Get(names[order[i%n]]) == nil {
				b.Fatal("missing")
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if m[names[order[i%n]]] == nil {
				b.Fatal("missing")
			}
		}
	})
}

// TestSetFilledInAnothersOrder fills a set in the slot order of one twice
// its size, as the cache is filled from the gate's served set, both
// presized and grown, and requires short probes: every set hashes a name
// alike (Hash), so this is where a placement that let one set pile up
// what another spread out would show.
func TestSetFilledInAnothersOrder(t *testing.T) {
	const n = 90000 // a's table is then twice that of a set made for n
	a := NewSet(2 * n)
	for i := range 2 * n {
		name := fmt.Sprintf("cluster-%d", i)
		a.Put(name, &Resource{Name: name})
	}
	// A set never shrinks: a keeps its table for 2n.
	for i := range n {
		a.Delete(fmt.Sprintf("cluster-%d", 2*i))
	}
	for _, b := range []*Set{NewSet(a.Len()), NewSet(0)} {
		for name, r := range a.All() {
			b.Put(name, r)
		}
		total, longest := 0, 0
		mask := len(b.slots) - 1
		for i, r := range b.slots {
			if r == nil {
				continue
			}
			home, _ := b.place(Hash(r.Name))
			d := (i - home) & mask
			total += d
			longest = max(longest, d)
		}
		if mean := float64(total) / n; mean > 4 || longest > 400 {
			t.Fatalf("%d slots: probes from home: mean %.1f, longest %d; want short runs", len(b.slots), mean, longest)
		}
	}
}
