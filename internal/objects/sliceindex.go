package objects

import (
	"hash/maphash"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// sliceIndex lists EndpointSlices by the Service they belong to, so that
// building a ClusterLoadAssignment touches only its slices. At 10,000
// roots it holds tens of thousands of Services, nearly all with one slice,
// so it keys a 64-bit hash of the Service, not the name with its two
// string headers: 32 bytes a map slot where the name took 56. A hash
// lists the slices of every Service that has it, sorted by namespace,
// Service and name, so that the slices of one Service lie together in
// name order and two Services that hash alike never mix. A list is
// replaced, never changed in place, so that what of returned stays as it
// was.
type sliceIndex struct {
	// hash, when set, replaces the seeded hash: tests make Services
	// collide with it.
	hash func(types.NamespacedName) uint64
	m    map[uint64][]*EndpointSlice
}

// sliceSeed is the process's, not a snapshot's, so that two snapshots of
// the same objects stay deeply equal, as tests compare them.
var sliceSeed = maphash.MakeSeed()

func newSliceIndex() sliceIndex { return sliceIndex{m: map[uint64][]*EndpointSlice{}} }

func (x *sliceIndex) hashOf(svc types.NamespacedName) uint64 {
	if x.hash != nil {
		return x.hash(svc)
	}
	return maphash.Comparable(sliceSeed, svc)
}

// of returns the slices of svc, sorted by name: the list itself when it is
// all svc's, as it is unless another Service has the same hash.
func (x *sliceIndex) of(svc types.NamespacedName) []*EndpointSlice {
	list := x.m[x.hashOf(svc)]
	if len(list) == 0 || ofService(list[0], svc) && ofService(list[len(list)-1], svc) {
		return list
	}
	i, _ := slices.BinarySearchFunc(list, sliceKey{svc.Namespace, svc.Name, ""}, compareSlice)
	j := i
	for j < len(list) && ofService(list[j], svc) {
		j++
	}
	if i == j {
		return nil
	}
	return list[i:j:j]
}

// add lists es, which must belong to svc.
func (x *sliceIndex) add(svc types.NamespacedName, es *EndpointSlice) {
	h := x.hashOf(svc)
	old := x.m[h]
	i, _ := slices.BinarySearchFunc(old, keyOfSlice(es), compareSlice)
	x.m[h] = slices.Insert(slices.Clip(old), i, es)
}

// remove takes es, listed under svc, off its list.
func (x *sliceIndex) remove(svc types.NamespacedName, es *EndpointSlice) {
	h := x.hashOf(svc)
	list := x.m[h]
	i, found := slices.BinarySearchFunc(list, keyOfSlice(es), compareSlice)
	switch {
	case !found:
	case len(list) == 1:
		delete(x.m, h)
	default:
		x.m[h] = slices.Delete(slices.Clone(list), i, i+1)
	}
}

func ofService(es *EndpointSlice, svc types.NamespacedName) bool {
	return es.Service == svc.Name && es.Namespace == svc.Namespace
}

// sliceKey is the order of a list: namespace, Service, name.
type sliceKey struct{ namespace, service, name string }

func keyOfSlice(es *EndpointSlice) sliceKey { return sliceKey{es.Namespace, es.Service, es.Name} }

func compareSlice(es *EndpointSlice, k sliceKey) int {
	if c := strings.Compare(es.Namespace, k.namespace); c != 0 {
		return c
	}
	if c := strings.Compare(es.Service, k.service); c != 0 {
		return c
	}
	return strings.Compare(es.Name, k.name)
}
