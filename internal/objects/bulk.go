package objects

import (
	"cmp"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
)

// keyed is an object with the key its map is indexed by.
type keyed struct {
	nn  types.NamespacedName
	obj runtime.Object
}

// bulkJob fills the maps of one kind, which hold n objects.
type bulkJob struct {
	n    int
	fill func()
}

// SnapshotOf returns the snapshot that Upsert of each of objs in order onto
// NewSnapshot would, or an error naming the first unsupported type. It
// exists for sources that hand over every object at once (a directory of
// 100,000 objects): each map is made at its final size and the kinds are
// filled on every core, where Upsert grows one map at a time on one core.
func SnapshotOf(objs []runtime.Object) (*Snapshot, error) {
	return fillSnapshot(NewSnapshot(), objs)
}

// fillSnapshot is SnapshotOf onto s, an empty snapshot.
func fillSnapshot(s *Snapshot, objs []runtime.Object) (*Snapshot, error) {
	byKind, known, err := listByKind(objs)
	if err != nil {
		return nil, err
	}
	if !known {
		// A kind added after this file was written: Upsert knows it.
		for _, obj := range objs {
			if _, err := s.Upsert(obj); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	// Maps of kinds not filled below stay s's, never nil.
	jobs := []bulkJob{
		{len(byKind[KindHTTPProxy]), func() { s.HTTPProxies = fill[*switchyardv1.HTTPProxy](byKind[KindHTTPProxy]) }},
		{len(byKind[KindExtensionService]), func() {
			s.ExtensionServices = fill[*switchyardv1alpha1.ExtensionService](byKind[KindExtensionService])
		}},
		{len(byKind[KindTLSCertificateDelegation]), func() {
			s.Delegations = fill[*switchyardv1.TLSCertificateDelegation](byKind[KindTLSCertificateDelegation])
			// The index is made from the map, so a replaced definition
			// leaves nothing behind in it.
			for _, d := range s.Delegations {
				s.indexDelegation(d)
			}
		}},
		{len(byKind[KindService]), func() { s.Services = fill[*Service](byKind[KindService]) }},
		{len(byKind[KindEndpointSlice]), func() {
			s.EndpointSlices = fill[*EndpointSlice](byKind[KindEndpointSlice])
		}},
		// The Service index of slices costs as much as their map, so it is
		// made beside it from the list, and made again from the map below
		// in the rare case that a later slice replaced an earlier one.
		{len(byKind[KindEndpointSlice]), func() {
			for _, o := range byKind[KindEndpointSlice] {
				s.indexSlice(o.obj.(*EndpointSlice))
			}
		}},
		{len(byKind[KindSecret]), func() { s.Secrets = fill[*corev1.Secret](byKind[KindSecret]) }},
		{len(byKind[KindNode]), func() { s.Nodes = fillNamed[*corev1.Node](byKind[KindNode]) }},
		{len(byKind[KindNamespace]), func() { s.Namespaces = fillNamed[*corev1.Namespace](byKind[KindNamespace]) }},
		{len(byKind[KindTrafficSplit]), func() { s.TrafficSplits = fill[*splitv1alpha4.TrafficSplit](byKind[KindTrafficSplit]) }},
		{len(byKind[KindHTTPRouteGroup]), func() {
			s.HTTPRouteGroups = fill[*specsv1alpha4.HTTPRouteGroup](byKind[KindHTTPRouteGroup])
		}},
		{len(byKind[KindTrafficTarget]), func() {
			s.TrafficTargets = fill[*accessv1alpha3.TrafficTarget](byKind[KindTrafficTarget])
		}},
		{len(byKind[KindPod]), func() { s.Pods = fill[*corev1.Pod](byKind[KindPod]) }},
	}
	// The largest kinds start first, so that no core is left with a large
	// kind after the others have finished.
	slices.SortStableFunc(jobs, func(a, b bulkJob) int { return cmp.Compare(b.n, a.n) })
	runJobs(jobs)
	if len(s.EndpointSlices) < len(byKind[KindEndpointSlice]) {
		// A slice was replaced, perhaps by one of another Service: the
		// index made from the list may hold both.
		clear(s.slicesByService.m)
		for _, es := range s.EndpointSlices {
			s.indexSlice(es)
		}
	}
	return s, nil
}

// listByKind sorts objs by kind, keeping their order within a kind; known
// is false when a kind is not one SnapshotOf fills.
func listByKind(objs []runtime.Object) (byKind [KindPod + 1][]keyed, known bool, err error) {
	// Counting first makes every list once at its size: growing them
	// would copy and drop half as much again.
	var count [KindPod + 1]int
	for _, obj := range objs {
		key, err := KeyOf(obj)
		if err != nil {
			return byKind, false, err
		}
		if key.Kind < 1 || key.Kind > KindPod {
			return byKind, false, nil
		}
		count[key.Kind]++
	}
	for k, n := range count {
		byKind[k] = make([]keyed, 0, n)
	}
	for _, obj := range objs {
		key, _ := KeyOf(obj) // every type was read above
		byKind[key.Kind] = append(byKind[key.Kind], keyed{key.NamespacedName(), Held(obj)})
	}
	return byKind, true, nil
}

// runJobs runs the jobs in order on every core and returns when all are
// done.
func runJobs(jobs []bulkJob) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(jobs)); i = next.Add(1) - 1 {
				jobs[i].fill()
			}
		}()
	}
	wg.Wait()
}

// fill makes the map of one namespaced kind; a later object replaces an
// earlier one of the same name, as Upsert does.
func fill[P runtime.Object](objs []keyed) map[types.NamespacedName]P {
	m := make(map[types.NamespacedName]P, len(objs))
	for _, o := range objs {
		m[o.nn] = o.obj.(P)
	}
	return m
}

// fillNamed is fill for a kind without a namespace.
func fillNamed[P runtime.Object](objs []keyed) map[string]P {
	m := make(map[string]P, len(objs))
	for _, o := range objs {
		m[o.nn.Name] = o.obj.(P)
	}
	return m
}
