package incremental

import (
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// depIndex maps an object key to the units that read it. Most keys have
// one reader; a shared certificate or a delegation namespace may have
// thousands, so readers are kept in a map once they are more than a few.
type depIndex struct {
	m map[objects.Key]*readers
	// block holds the readers the first build will need (presize), taken
	// one by one instead of allocated: a build adds a key per object.
	block []readers
}

// unit is a root or an ExtensionService, as a reader of keys.
type unit any

type readers struct {
	few  []unit
	many map[unit]struct{}
	// first backs few until a second reader: most keys never have one,
	// and a build adds a key per object.
	first [1]unit
}

// manyReaders is when a key's readers move from a slice to a map.
const manyReaders = 16

func newDepIndex() *depIndex { return &depIndex{m: map[objects.Key]*readers{}} }

// presize makes the index's map and readers for n keys.
func (d *depIndex) presize(n int) {
	d.m = make(map[objects.Key]*readers, n)
	d.block = make([]readers, n)
}

func (d *depIndex) newReaders() *readers {
	if len(d.block) == 0 {
		return &readers{}
	}
	r := &d.block[0]
	d.block = d.block[1:]
	return r
}

func (d *depIndex) add(u unit, keys []objects.Key) {
	for _, k := range keys {
		r := d.m[k]
		if r == nil {
			r = d.newReaders()
			r.few = r.first[:0]
			d.m[k] = r
		}
		switch {
		case r.many != nil:
			r.many[u] = struct{}{}
		case len(r.few) < manyReaders:
			r.few = append(r.few, u)
		default:
			r.many = make(map[unit]struct{}, 2*manyReaders)
			for _, x := range r.few {
				r.many[x] = struct{}{}
			}
			r.many[u] = struct{}{}
			r.few = nil
		}
	}
}

func (d *depIndex) remove(u unit, keys []objects.Key) {
	for _, k := range keys {
		r := d.m[k]
		if r == nil {
			continue
		}
		if r.many != nil {
			delete(r.many, u)
		} else {
			r.few = removeFirst(r.few, u)
		}
		if len(r.few) == 0 && len(r.many) == 0 {
			delete(d.m, k)
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

func (d *depIndex) eachExact(k objects.Key, fn func(unit)) {
	r := d.m[k]
	if r == nil {
		return
	}
	for _, u := range r.few {
		fn(u)
	}
	for u := range r.many {
		fn(u)
	}
}
