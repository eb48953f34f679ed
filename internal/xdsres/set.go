package xdsres

import (
	"hash/maphash"
	"iter"
)

// Set holds one type's resources by name. A resource carries its own
// name, so the set keeps only pointers, in an open-addressed table
// (linear probing, at most three quarters full): 9 bytes a slot, where a
// map[string]*Resource takes 25 and keeps its tables between half and
// seven eighths full. The ninth byte is a tag of the name's hash, so that
// a probe reads a resource's name (a cache miss in a large set) only
// when the tags agree. At 10,000 roots the engine's targets, the gate's
// served sets and the cache each hold about 200,000 resources. A
// resource held under a name not its own (none is, as the engine makes
// them) goes to other, so that the set is a map for whatever it is given.
//
// A nil *Set is an empty set, as a nil map is: Get, Lookup, Len, All and
// Delete accept one; Put does not.
//
// Every set hashes a name alike (Hash), so that a caller looking one name
// up in several sets (the gate: the build's, what is served) hashes it
// once and passes the hash (the Hashed methods).
type Set struct {
	slots []*Resource
	tags  []uint8
	n     int
	other map[string]*Resource
}

// NewSet returns an empty set with room for n resources.
func NewSet(n int) *Set {
	s := &Set{}
	if n > 0 {
		s.Reserve(n)
	}
	return s
}

// SetOf returns a set holding m's resources, each under its key.
func SetOf(m map[string]*Resource) *Set {
	s := NewSet(len(m))
	for name, r := range m {
		s.Put(name, r)
	}
	return s
}

// setSeed is the seed of every set's hash: random for each process, so
// that no one can choose names that collide.
var setSeed = maphash.MakeSeed()

// Hash is the hash a set keeps name under.
func Hash(name string) uint64 { return maphash.String(setSeed, name) }

// place returns the home slot and the tag (its top byte) of hash h.
func (s *Set) place(h uint64) (int, uint8) {
	return int(h & uint64(len(s.slots)-1)), uint8(h >> 56)
}

// find returns the slot holding name, whose hash is h, or the empty slot
// where it would go, with name's tag; the table must not be empty.
func (s *Set) find(name string, h uint64) (int, uint8, bool) {
	mask := len(s.slots) - 1
	i, tag := s.place(h)
	for ; ; i = (i + 1) & mask {
		switch r := s.slots[i]; {
		case r == nil:
			return i, tag, false
		case s.tags[i] == tag && r.Name == name:
			return i, tag, true
		}
	}
}

// Lookup returns the resource held under name, and whether there is one.
func (s *Set) Lookup(name string) (*Resource, bool) {
	if s == nil || s.n == 0 && len(s.other) == 0 {
		return nil, false // spares hashing the name
	}
	return s.LookupHashed(name, Hash(name))
}

// LookupHashed is Lookup for a name whose Hash is h.
func (s *Set) LookupHashed(name string, h uint64) (*Resource, bool) {
	if s == nil {
		return nil, false
	}
	if r, ok := s.other[name]; ok {
		return r, true
	}
	if s.n == 0 {
		return nil, false
	}
	if i, _, ok := s.find(name, h); ok {
		return s.slots[i], true
	}
	return nil, false
}

// Get returns the resource held under name, nil when there is none.
func (s *Set) Get(name string) *Resource {
	r, _ := s.Lookup(name)
	return r
}

// GetHashed is Get for a name whose Hash is h.
func (s *Set) GetHashed(name string, h uint64) *Resource {
	r, _ := s.LookupHashed(name, h)
	return r
}

// Len is how many resources the set holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return s.n + len(s.other)
}

// Put holds r under name; r must not be nil (Delete removes a name).
func (s *Set) Put(name string, r *Resource) { s.PutHashed(name, Hash(name), r) }

// PutHashed is Put for a name whose Hash is h.
func (s *Set) PutHashed(name string, h uint64, r *Resource) {
	if r.Name != name {
		s.deleteSlot(name, h)
		if s.other == nil {
			s.other = map[string]*Resource{}
		}
		s.other[name] = r
		return
	}
	delete(s.other, name)
	s.Reserve(s.n + 1)
	i, tag, ok := s.find(name, h)
	if !ok {
		s.n++
	}
	s.slots[i], s.tags[i] = r, tag
}

// Reserve grows the table to hold n resources.
func (s *Set) Reserve(n int) {
	size := max(len(s.slots), 8)
	for n*4 > size*3 {
		size *= 2
	}
	if size == len(s.slots) {
		return
	}
	old := s.slots
	s.slots, s.tags = make([]*Resource, size), make([]uint8, size)
	for _, r := range old {
		if r != nil {
			i, tag, _ := s.find(r.Name, Hash(r.Name))
			s.slots[i], s.tags[i] = r, tag
		}
	}
}

// Delete removes what is held under name, if anything.
func (s *Set) Delete(name string) {
	if s == nil || s.n == 0 && len(s.other) == 0 {
		return // as deleting from a nil map does
	}
	s.DeleteHashed(name, Hash(name))
}

// DeleteHashed is Delete for a name whose Hash is h.
func (s *Set) DeleteHashed(name string, h uint64) {
	if s == nil {
		return
	}
	if _, ok := s.other[name]; ok {
		delete(s.other, name)
		return
	}
	s.deleteSlot(name, h)
}

// deleteSlot empties name's slot and moves back the resources after it
// that probed past it, so that every resource stays reachable from its
// home slot without tombstones.
func (s *Set) deleteSlot(name string, h uint64) {
	if s.n == 0 {
		return
	}
	hole, _, ok := s.find(name, h)
	if !ok {
		return
	}
	s.slots[hole] = nil
	s.n--
	mask := len(s.slots) - 1
	for j := (hole + 1) & mask; s.slots[j] != nil; j = (j + 1) & mask {
		// The resource at j may fill the hole when the hole is no
		// nearer its home than j is.
		if home, _ := s.place(Hash(s.slots[j].Name)); (j-home)&mask >= (j-hole)&mask {
			s.slots[hole], s.slots[j] = s.slots[j], nil
			s.tags[hole] = s.tags[j]
			hole = j
		}
	}
}

// All yields every resource with the name it is held under. The set must
// not change while All runs: a deletion moves resources between slots.
func (s *Set) All() iter.Seq2[string, *Resource] {
	return func(yield func(string, *Resource) bool) {
		if s == nil {
			return
		}
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

// Map returns a new map of what the set holds, for callers that want a
// map's operations (sorting its keys, comparing) more than its memory.
func (s *Set) Map() map[string]*Resource {
	out := make(map[string]*Resource, s.Len())
	for name, r := range s.All() {
		out[name] = r
	}
	return out
}

// Names lists the names held, in no particular order.
func (s *Set) Names() []string {
	out := make([]string, 0, s.Len())
	for name := range s.All() {
		out = append(out, name)
	}
	return out
}
