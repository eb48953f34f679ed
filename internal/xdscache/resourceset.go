package xdscache

import (
	"hash/maphash"
	"iter"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// resourceSet holds one type's resources by name. A resource carries its
// own name, so the set keeps only pointers, in an open-addressed table
// (linear probing, at most three quarters full): 8 bytes a slot, where a
// map[string]*xdsres.Resource takes 24 and keeps its tables between half
// and seven eighths full. The cache holds about 200,000 resources at
// 10,000 roots. A resource held under a name not its own (none is, as
// the engine makes them) goes to other, so that the set is a map for
// whatever it is given.
type resourceSet struct {
	seed  maphash.Seed
	slots []*xdsres.Resource
	n     int
	other map[string]*xdsres.Resource
}

func newResourceSet() *resourceSet { return &resourceSet{seed: maphash.MakeSeed()} }

func (s *resourceSet) home(name string) int {
	return int(maphash.String(s.seed, name) & uint64(len(s.slots)-1))
}

// find returns the slot holding name, or the empty slot where it would
// go; the table must not be empty.
func (s *resourceSet) find(name string) (int, bool) {
	mask := len(s.slots) - 1
	for i := s.home(name); ; i = (i + 1) & mask {
		switch r := s.slots[i]; {
		case r == nil:
			return i, false
		case r.Name == name:
			return i, true
		}
	}
}

func (s *resourceSet) get(name string) (*xdsres.Resource, bool) {
	if r, ok := s.other[name]; ok {
		return r, true
	}
	if s.n == 0 {
		return nil, false
	}
	if i, ok := s.find(name); ok {
		return s.slots[i], true
	}
	return nil, false
}

func (s *resourceSet) len() int { return s.n + len(s.other) }

// set holds r under name.
func (s *resourceSet) set(name string, r *xdsres.Resource) {
	if r.Name != name {
		s.deleteSlot(name)
		if s.other == nil {
			s.other = map[string]*xdsres.Resource{}
		}
		s.other[name] = r
		return
	}
	delete(s.other, name)
	s.reserve(s.n + 1)
	i, ok := s.find(name)
	if !ok {
		s.n++
	}
	s.slots[i] = r
}

// reserve grows the table to hold n resources.
func (s *resourceSet) reserve(n int) {
	size := max(len(s.slots), 8)
	for n*4 > size*3 {
		size *= 2
	}
	if size == len(s.slots) {
		return
	}
	old := s.slots
	s.slots = make([]*xdsres.Resource, size)
	for _, r := range old {
		if r != nil {
			i, _ := s.find(r.Name)
			s.slots[i] = r
		}
	}
}

func (s *resourceSet) delete(name string) {
	if _, ok := s.other[name]; ok {
		delete(s.other, name)
		return
	}
	s.deleteSlot(name)
}

// deleteSlot empties name's slot and moves back the resources after it
// that probed past it, so that every resource stays reachable from its
// home slot without tombstones.
func (s *resourceSet) deleteSlot(name string) {
	if s.n == 0 {
		return
	}
	hole, ok := s.find(name)
	if !ok {
		return
	}
	s.slots[hole] = nil
	s.n--
	mask := len(s.slots) - 1
	for j := (hole + 1) & mask; s.slots[j] != nil; j = (j + 1) & mask {
		// The resource at j may fill the hole when the hole is no
		// nearer its home than j is.
		if home := s.home(s.slots[j].Name); (j-home)&mask >= (j-hole)&mask {
			s.slots[hole], s.slots[j] = s.slots[j], nil
			hole = j
		}
	}
}

// all yields every resource with the name it is held under.
func (s *resourceSet) all() iter.Seq2[string, *xdsres.Resource] {
	return func(yield func(string, *xdsres.Resource) bool) {
		for _, r := range s.slots {
			if r != nil && !yield(r.Name, r) {
				return
			}
		}
		for name, r := range s.other {
			if !yield(name, r) {
				return
			}
		}
	}
}
