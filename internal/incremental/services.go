package incremental

import (
	"hash/maphash"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// serviceIndex lists the clusters that follow each Service's endpoints. At
// 10,000 roots it holds tens of thousands of Services, nearly all with one
// cluster, so it keys a 64-bit hash of the Service (seeded per index), not
// the name with its two string headers, and holds a hash's only cluster in
// the map itself. A lookup keeps only the clusters whose own Services
// (clusterEntry.services) hold the one asked for, so two Services that
// hash alike never mix.
type serviceIndex struct {
	seed maphash.Seed
	one  map[uint64]*clusterEntry
	more map[uint64][]*clusterEntry
}

func newServiceIndex(n int) serviceIndex {
	return serviceIndex{seed: maphash.MakeSeed(), one: make(map[uint64]*clusterEntry, n), more: map[uint64][]*clusterEntry{}}
}

func (x *serviceIndex) hash(svc types.NamespacedName) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	_, _ = h.WriteString(svc.Namespace)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(svc.Name)
	return h.Sum64()
}

// add lists ce under svc, one of its Services.
func (x *serviceIndex) add(svc types.NamespacedName, ce *clusterEntry) { x.addHash(x.hash(svc), ce) }

func (x *serviceIndex) addHash(h uint64, ce *clusterEntry) {
	if list, ok := x.more[h]; ok {
		x.more[h] = append(list, ce)
		return
	}
	if first, ok := x.one[h]; ok {
		delete(x.one, h)
		x.more[h] = []*clusterEntry{first, ce}
		return
	}
	x.one[h] = ce
}

// remove takes ce off svc's list once, as add listed it once per Service.
func (x *serviceIndex) remove(svc types.NamespacedName, ce *clusterEntry) {
	x.removeHash(x.hash(svc), ce)
}

func (x *serviceIndex) removeHash(h uint64, ce *clusterEntry) {
	if first, ok := x.one[h]; ok {
		if first == ce {
			delete(x.one, h)
		}
		return
	}
	switch list := removeFirst(x.more[h], ce); len(list) {
	case 0:
		delete(x.more, h)
	case 1:
		delete(x.more, h)
		x.one[h] = list[0]
	default:
		x.more[h] = list
	}
}

// each calls fn once for every cluster listed under svc.
func (x *serviceIndex) each(svc types.NamespacedName, fn func(*clusterEntry)) {
	h := x.hash(svc)
	if ce, ok := x.one[h]; ok {
		if slices.Contains(ce.services, svc) {
			fn(ce)
		}
		return
	}
	list := x.more[h]
	for i, ce := range list {
		// A cluster of two Services that hash alike is listed twice.
		if slices.Contains(ce.services, svc) && !slices.Contains(list[:i], ce) {
			fn(ce)
		}
	}
}

// len is how many hashes the index holds, for tests.
func (x *serviceIndex) len() int { return len(x.one) + len(x.more) }
