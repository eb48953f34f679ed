package pipeline

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// ReasonEndpointInvalid is the warning an HTTPProxy or ExtensionService
// gets for each endpoint of its Services that the translator leaves out
// because no client could use it (translator.EndpointProblems).
const ReasonEndpointInvalid = "EndpointInvalid"

// endpointWarnings keeps what the translator left out of each cluster's
// load assignment. The DAG never reads EndpointSlices (an endpoint change
// is not a rebuild), so the warnings are worked out here, for the
// clusters a batch adds and those of the Services whose slices or ports
// it changes, on the endpoint path as on a full build.
type endpointWarnings struct {
	// problems holds the clusters with something left out, by name.
	problems map[string][]translator.EndpointProblem
}

// update works out the problems of the clusters a batch may have changed
// them for: every cluster on the first build; then the clusters it adds
// and those made from the Services whose slices or ports it changes. A
// cluster's name is the hash of its spec, so a cluster that stays has the
// same backends.
func (w *endpointWarnings) update(e *incremental.Engine, snap *objects.Snapshot, ch incremental.Changes, delta *incremental.Delta) {
	if delta != nil && delta.All {
		w.problems = nil
		clusters := e.DAG().Clusters
		for i, found := range everyClusterProblems(clusters, snap) {
			w.set(clusters[i].Name, found)
		}
		return
	}
	check := map[string]bool{}
	if delta != nil {
		for name := range delta.Changes[xdsres.GroupEnvoy][resource.ClusterType] {
			check[name] = true
		}
	}
	services := map[types.NamespacedName]bool{}
	for s := range ch.Endpoints {
		services[s] = true
	}
	for _, k := range ch.Objects {
		if k.Kind == objects.KindService {
			services[k.NamespacedName()] = true
		}
	}
	for s := range services {
		for _, r := range e.Produced(objects.Key{Kind: objects.KindService, Namespace: s.Namespace, Name: s.Name}) {
			if r.Group == xdsres.GroupEnvoy && r.Type == resource.ClusterType {
				check[r.Name] = true
			}
		}
	}
	if len(check) == 0 {
		return
	}
	// The DAG is materialized lazily; only a batch that touched clusters
	// or Services pays for it here.
	d := e.DAG()
	c := newBackendChecks(snap, 0)
	for name := range check {
		var found []translator.EndpointProblem
		if i, ok := slices.BinarySearchFunc(d.Clusters, name, func(c *dag.Cluster, n string) int { return strings.Compare(c.Name, n) }); ok {
			found = c.of(d.Clusters[i])
		}
		w.set(name, found)
	}
}

// set records a cluster's problems, or that it has none.
func (w *endpointWarnings) set(cluster string, found []translator.EndpointProblem) {
	if len(found) == 0 {
		delete(w.problems, cluster)
		return
	}
	if w.problems == nil {
		w.problems = map[string][]translator.EndpointProblem{}
	}
	w.problems[cluster] = found
}

// backendChecks works out clusters' problems for one batch. Clusters share
// backends (a Service behind several weightings), and a backend's problems
// depend on its Service and ports alone: each is checked once.
type backendChecks struct {
	snap      *objects.Snapshot
	byBackend map[backendKey][]translator.EndpointProblem
}

type backendKey struct {
	svc              types.NamespacedName
	port, healthPort int32
}

// newBackendChecks returns checks for about n backends.
func newBackendChecks(snap *objects.Snapshot, n int) *backendChecks {
	return &backendChecks{snap: snap, byBackend: make(map[backendKey][]translator.EndpointProblem, n)}
}

// everyClusterProblems is backendChecks.of for every cluster of a build of
// everything, on every core: at 10,000 roots that is 66,000 backends, a
// fifth of a second on one. Each core checks a contiguous share of the
// clusters with checks of its own, presized for its share's backends, so
// a backend shared by clusters of two shares is checked twice at most.
func everyClusterProblems(clusters []*dag.Cluster, snap *objects.Snapshot) [][]translator.EndpointProblem {
	found := make([][]translator.EndpointProblem, len(clusters))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(clusters)/256))
	var wg sync.WaitGroup
	for k := range workers {
		lo, hi := k*len(clusters)/workers, (k+1)*len(clusters)/workers
		wg.Go(func() {
			backends := 0
			for _, cl := range clusters[lo:hi] {
				backends += len(cl.Spec.Backends)
			}
			c := newBackendChecks(snap, backends)
			for i := lo; i < hi; i++ {
				found[i] = c.of(clusters[i])
			}
		})
	}
	wg.Wait()
	return found
}

func (c *backendChecks) of(cl *dag.Cluster) []translator.EndpointProblem {
	var found []translator.EndpointProblem
	for _, b := range cl.Spec.Backends {
		k := backendKey{b.Service, b.Port, b.HealthPort}
		ps, done := c.byBackend[k]
		if !done {
			ps = translator.BackendProblems(b, c.snap)
			c.byBackend[k] = ps
		}
		found = translator.AppendProblems(found, ps)
	}
	return found
}

// conditions turns the problems into warnings of the objects whose
// clusters they are in, one per endpoint left out.
func (w *endpointWarnings) conditions(owners OwnersFunc) Conditions {
	if len(w.problems) == 0 {
		return nil
	}
	out := Conditions{}
	names := make([]string, 0, len(w.problems))
	for name := range w.problems {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		var reporting []objects.Key
		for _, k := range owners(xdsres.GroupEnvoy, resource.EndpointType, name) {
			if k.Kind == objects.KindHTTPProxy || k.Kind == objects.KindExtensionService {
				reporting = append(reporting, k)
			}
		}
		for _, p := range w.problems[name] {
			c := endpointInvalid(p)
			for _, k := range reporting {
				if !slices.Contains(out[k], c) {
					out[k] = append(out[k], c)
				}
			}
		}
	}
	return out
}

// endpointInvalid is the warning for one problem. It names the slice and
// the address, not the cluster, so that a Service behind several of an
// object's clusters is reported once.
func endpointInvalid(p translator.EndpointProblem) switchyardv1.SubCondition {
	msg := fmt.Sprintf("EndpointSlice %s: endpoint %q is left out: %s", p.Slice, p.Address, p.Problem)
	if p.WholeSlice {
		msg = fmt.Sprintf("EndpointSlice %s is left out: %s", p.Slice, p.Problem)
	}
	return switchyardv1.SubCondition{Type: dag.ErrService, Reason: ReasonEndpointInvalid, Message: msg}
}
