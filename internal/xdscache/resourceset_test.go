package xdscache

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestResourceSetIsAMap makes random sets, replacements and deletions on a
// resourceSet and a map side by side, a few of them under a name that is
// not the resource's, and checks that both hold the same after each.
func TestResourceSetIsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s, want := newResourceSet(), map[string]*xdsres.Resource{}
	check := func(step int) {
		t.Helper()
		if s.len() != len(want) {
			t.Fatalf("step %d: %d resources, want %d", step, s.len(), len(want))
		}
		got := maps.Collect(s.all())
		if !maps.Equal(got, want) {
			t.Fatalf("step %d: the set lists %d resources, not the map's %d", step, len(got), len(want))
		}
		for name, r := range want {
			if x, ok := s.get(name); !ok || x != r {
				t.Fatalf("step %d: get(%q) = %v, %v", step, name, x, ok)
			}
		}
	}
	for step := range 4000 {
		name := fmt.Sprint("r", rng.IntN(600))
		switch op := rng.IntN(10); {
		case op < 6:
			r := &xdsres.Resource{Name: name, Version: fmt.Sprint(step)}
			if op == 0 && rng.IntN(8) == 0 {
				r.Name = "other"
			}
			s.set(name, r)
			want[name] = r
		default:
			s.delete(name)
			delete(want, name)
		}
		if _, ok := s.get("absent"); ok {
			t.Fatal("found a name never set")
		}
		if step%97 == 0 || step > 3900 {
			check(step)
		}
	}
	for name := range want {
		s.delete(name)
		delete(want, name)
	}
	check(-1)
}
