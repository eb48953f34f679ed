package incremental

import (
	"hash/maphash"
	"math/bits"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// serviceIndex lists the clusters that follow each Service's endpoints. At
// 10,000 roots it holds tens of thousands of Services, nearly all with one
// cluster, so it keys a 64-bit hash of the Service (seeded per index), not
// the name with its two string headers, and holds a hash's only cluster in
// an open-addressed table of its own (linear probing, at most three
// quarters full): 16 bytes a slot with the hash kept beside the cluster,
// so that probing and moving never hash again. A map of the same pairs
// adds a control byte a slot and, made for as many Services, is half
// empty. A hash with several clusters goes to more. A lookup keeps only
// the clusters whose own Services (clusterEntry.services) hold the one
// asked for, so two Services that hash alike never mix.
type serviceIndex struct {
	seed maphash.Seed
	one  clusterTable
	more map[uint64][]*clusterEntry
}

func newServiceIndex(n int) serviceIndex {
	x := serviceIndex{seed: maphash.MakeSeed(), more: map[uint64][]*clusterEntry{}}
	x.one.reserve(n)
	return x
}

func (x *serviceIndex) hash(svc types.NamespacedName) uint64 { return maphash.Comparable(x.seed, svc) }

// add lists ce under svc, one of its Services.
func (x *serviceIndex) add(svc types.NamespacedName, ce *clusterEntry) { x.addHash(x.hash(svc), ce) }

func (x *serviceIndex) addHash(h uint64, ce *clusterEntry) {
	if list, ok := x.more[h]; ok {
		x.more[h] = append(list, ce)
		return
	}
	if first, ok := x.one.delete(h); ok {
		x.more[h] = []*clusterEntry{first, ce}
		return
	}
	x.one.set(h, ce)
}

// remove takes ce off svc's list once, as add listed it once per Service.
func (x *serviceIndex) remove(svc types.NamespacedName, ce *clusterEntry) {
	x.removeHash(x.hash(svc), ce)
}

func (x *serviceIndex) removeHash(h uint64, ce *clusterEntry) {
	if first, ok := x.one.get(h); ok {
		if first == ce {
			x.one.delete(h)
		}
		return
	}
	switch list := removeFirst(x.more[h], ce); len(list) {
	case 0:
		delete(x.more, h)
	case 1:
		delete(x.more, h)
		x.one.set(h, list[0])
	default:
		x.more[h] = list
	}
}

// each calls fn once for every cluster listed under svc.
func (x *serviceIndex) each(svc types.NamespacedName, fn func(*clusterEntry)) {
	h := x.hash(svc)
	if ce, ok := x.one.get(h); ok {
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
func (x *serviceIndex) len() int { return x.one.n + len(x.more) }

// clusterTable holds one cluster under each of its hashes. Any 64 bits
// are a hash, 0 too, so an empty slot is one without a cluster. Its size
// is any number, not a power of two, with a hash's home slot taken from
// its high bits (h×size/2^64): a table of a power of two slots is half
// empty for as many clusters as the Services at 10,000 roots, hardly smaller
// than the map it replaces.
type clusterTable struct {
	slots []hashedCluster
	n     int
}

type hashedCluster struct {
	hash uint64
	ce   *clusterEntry
}

func (t *clusterTable) home(h uint64) int {
	hi, _ := bits.Mul64(h, uint64(len(t.slots)))
	return int(hi)
}

// after is how many slots from i on j is, going round the table.
func (t *clusterTable) after(i, j int) int {
	if j < i {
		j += len(t.slots)
	}
	return j - i
}

// find returns the slot holding h, or the empty slot where it would go;
// the table must not be empty.
func (t *clusterTable) find(h uint64) (int, bool) {
	for i := t.home(h); ; i = t.next(i) {
		switch s := &t.slots[i]; {
		case s.ce == nil:
			return i, false
		case s.hash == h:
			return i, true
		}
	}
}

func (t *clusterTable) next(i int) int {
	if i++; i == len(t.slots) {
		return 0
	}
	return i
}

func (t *clusterTable) get(h uint64) (*clusterEntry, bool) {
	if t.n == 0 {
		return nil, false
	}
	if i, ok := t.find(h); ok {
		return t.slots[i].ce, true
	}
	return nil, false
}

// set holds ce under h, in place of the cluster held there before.
func (t *clusterTable) set(h uint64, ce *clusterEntry) {
	t.reserve(t.n + 1)
	i, ok := t.find(h)
	if !ok {
		t.n++
	}
	t.slots[i] = hashedCluster{h, ce}
}

// reserve grows the table to hold n clusters at most three quarters full:
// to that size when it is presized, to twice its size when it grows by
// one.
func (t *clusterTable) reserve(n int) {
	if n*4 <= len(t.slots)*3 {
		return
	}
	old := t.slots
	t.slots = make([]hashedCluster, max(8, (n*4+2)/3, 2*len(old)))
	for _, s := range old {
		if s.ce != nil {
			i, _ := t.find(s.hash)
			t.slots[i] = s
		}
	}
}

// delete empties h's slot and returns the cluster it held. The clusters
// after it that probed past it move back, so that every cluster stays
// reachable from its home slot without tombstones.
func (t *clusterTable) delete(h uint64) (*clusterEntry, bool) {
	if t.n == 0 {
		return nil, false
	}
	hole, ok := t.find(h)
	if !ok {
		return nil, false
	}
	ce := t.slots[hole].ce
	t.slots[hole] = hashedCluster{}
	t.n--
	for j := t.next(hole); t.slots[j].ce != nil; j = t.next(j) {
		// The cluster at j may fill the hole when the hole is no nearer
		// its home than j is.
		if t.after(t.home(t.slots[j].hash), j) >= t.after(hole, j) {
			t.slots[hole], t.slots[j] = t.slots[j], hashedCluster{}
			hole = j
		}
	}
	return ce, true
}
