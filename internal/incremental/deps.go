package incremental

import (
	"hash/maphash"
	"slices"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// depIndex maps an object key to the units that read it.
//
// It is the engine's largest index (a key per object a root reads: about
// 80,000 at 10,000 roots), so it holds a 64-bit hash of each key rather
// than the key, 40 bytes of strings' headers, and most keys, which have
// one reader, hold that reader in the map itself. A lookup checks the
// candidates' own sorted keys (depsOf), so a hash two keys share only
// lists a unit under both, and never reports a unit that did not read
// the key.
type depIndex struct {
	seed maphash.Seed
	// one holds the hashes read by a single unit, many those read by
	// more (a shared certificate or a delegation namespace may have
	// thousands); a hash is in one of the two at most.
	one  map[uint64]unit
	many map[uint64]*readers
	// depsOf returns the keys a unit was indexed under, sorted by
	// objects.Key.Compare (its result's Deps).
	depsOf func(unit) []objects.Key
}

// unit is a root or an ExtensionService, as a reader of keys.
type unit any

// readers are the units of one hash, with repeats: two keys of a unit
// that hash alike list it twice, and removing one key removes one.
type readers struct {
	few  []unit
	many map[unit]int
}

// manyReaders is when a hash's readers move from a slice to a map.
const manyReaders = 16

func newDepIndex(depsOf func(unit) []objects.Key) *depIndex {
	return &depIndex{seed: maphash.MakeSeed(), one: map[uint64]unit{}, many: map[uint64]*readers{}, depsOf: depsOf}
}

// presize makes the index's map for n keys.
func (d *depIndex) presize(n int) { d.one = make(map[uint64]unit, n) }

func (d *depIndex) hash(k objects.Key) uint64 { return maphash.Comparable(d.seed, k) }

func (d *depIndex) add(u unit, keys []objects.Key) {
	for _, k := range keys {
		h := d.hash(k)
		if r := d.many[h]; r != nil {
			r.add(u)
			continue
		}
		if first, ok := d.one[h]; ok {
			delete(d.one, h)
			r := &readers{few: []unit{first}}
			r.add(u)
			d.many[h] = r
			continue
		}
		d.one[h] = u
	}
}

func (r *readers) add(u unit) {
	switch {
	case r.many != nil:
		r.many[u]++
	case len(r.few) < manyReaders:
		r.few = append(r.few, u)
	default:
		r.many = make(map[unit]int, 2*manyReaders)
		for _, x := range r.few {
			r.many[x]++
		}
		r.many[u]++
		r.few = nil
	}
}

func (d *depIndex) remove(u unit, keys []objects.Key) {
	for _, k := range keys {
		h := d.hash(k)
		if x, ok := d.one[h]; ok {
			if x == u {
				delete(d.one, h)
			}
			continue
		}
		r := d.many[h]
		if r == nil {
			continue
		}
		if r.many != nil {
			if r.many[u]--; r.many[u] <= 0 {
				delete(r.many, u)
			}
		} else {
			r.few = removeFirst(r.few, u)
		}
		if len(r.few) == 0 && len(r.many) == 0 {
			delete(d.many, h)
		}
	}
}

// each calls fn for every unit that read k. A change to a
// TLSCertificateDelegation also reaches the units that read every
// delegation of its namespace (recorded with an empty name).
func (d *depIndex) each(k objects.Key, fn func(unit)) {
	d.eachExact(k, fn)
	if k.Kind == objects.KindTLSCertificateDelegation && k.Name != "" {
		d.eachExact(objects.Key{Kind: k.Kind, Namespace: k.Namespace}, fn)
	}
}

// eachExact calls fn once for every unit that read k.
func (d *depIndex) eachExact(k objects.Key, fn func(unit)) {
	h := d.hash(k)
	if u, ok := d.one[h]; ok {
		d.ifRead(u, k, fn)
		return
	}
	r := d.many[h]
	if r == nil {
		return
	}
	for i, u := range r.few {
		if !slices.Contains(r.few[:i], u) {
			d.ifRead(u, k, fn)
		}
	}
	for u := range r.many {
		d.ifRead(u, k, fn)
	}
}

func (d *depIndex) ifRead(u unit, k objects.Key, fn func(unit)) {
	if _, found := slices.BinarySearchFunc(d.depsOf(u), k, objects.Key.Compare); found {
		fn(u)
	}
}
