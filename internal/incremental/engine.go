// Package incremental builds the xDS resources of every consumer group
// from a snapshot and keeps them up to date as objects change, recomputing
// only what read a changed object.
//
// A build is made of units: one result per root HTTPProxy (dag.BuildRoot)
// and one per ExtensionService (dag.BuildExtension), each listing the keys
// of every object it read (Deps). An index from those keys to the units
// tells, for a change, which units to rebuild; every other unit is reused
// as it is, with the resources already translated and encoded from it.
// What no single unit can settle — which root owns a contested host name
// or DNS name, the status of a proxy several roots include, which proxies
// are orphans — is kept per host name, per DNS name and per object key, and
// re-settled only where a change touched it, with the same rules (and the
// same dag functions) Assemble uses. Shared resources (clusters, their load
// assignments, secrets) are counted by the units that use them; a load
// assignment is recomputed when the endpoints of one of its Services
// change.
//
// Update returns what changed per group, type and name. The result is
// byte-identical to a full build (Reference) of the same snapshot; a test
// checks that over random sequences of changes.
//
// An Engine reads the snapshot it is given, which its caller changes only
// between calls, and is used by one goroutine.
package incremental

import (
	"log/slog"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Config is what an engine builds with.
type Config struct {
	DAG        dag.Options
	Translator translator.Options
	// Log receives the one message an engine logs: that it fell back to
	// full builds (see Engine.Degraded).
	Log *slog.Logger
	// Inspect, when set, is called on the resources the first update's
	// parallel phases encode, with the message each was encoded from:
	// the pipeline's gate checks each resource there, on every core,
	// rather than decoding it again, and keeps what it found for its
	// pass (pipeline.Gate.record). It is called concurrently.
	Inspect InspectFunc
}

// Changes says what changed in the snapshot since the last Update; the
// snapshot already holds the new state.
type Changes struct {
	// Objects are the keys of the objects added, updated or deleted.
	Objects []objects.Key
	// Endpoints names the Services whose EndpointSlices changed: the
	// Service a changed slice belongs to, before and after the change.
	Endpoints map[types.NamespacedName]bool
	// AllEndpoints is set when any Service's endpoints may have changed
	// (a Node changed: its drain annotation applies to every endpoint on
	// it).
	AllEndpoints bool
}

// Delta is what an Update changed.
type Delta struct {
	// All is set by the first Update: every resource of Targets is new,
	// and Changes is nil.
	All bool
	// Changes holds, per group, type URL and name, what changed.
	Changes map[xdsres.Group]map[string]map[string]Change
	// Assignments counts the load assignments computed, in every group.
	Assignments int
}

// Change is one resource before and after an update; Old is nil for a new
// resource, New for a deleted one.
type Change struct {
	Old, New *xdsres.Resource
}

// Targets are a group's complete resources: type URL to the set of that
// type's resources by name. A set, not a map of names: the engine, the
// gate and the cache each hold one per group, about 200,000 resources at
// 10,000 roots, and a set takes a third of a map's memory (xdsres.Set).
type Targets map[string]*xdsres.Set

// Engine holds the units of the last build and the resources made from
// them.
type Engine struct {
	cfg  Config
	snap *objects.Snapshot
	// keyPairs are the certificate checks of each worker (see forEach).
	keyPairs []*dag.KeyPairCache

	exts      dag.Extensions
	extDeps   *depIndex
	extClaims map[types.NamespacedName]*dnsClaim
	roots     map[types.NamespacedName]*rootUnit
	rootDeps  *depIndex

	claims   claims
	plain    plainHosts
	statuses statusTable
	mesh     meshUnit
	shared   sharedTables
	https    httpsListener
	fallback fallbackRoutes
	targets  map[xdsres.Group]Targets

	// u is the update in progress.
	u *update
	// generation counts updates, to tell what an update already computed.
	generation uint64

	// degraded is set once two different backend sets hash to one cluster
	// name (see Degraded); ref then holds the last full build.
	degraded bool
	ref      *ReferenceResult
	// dag is the last DAG materialized, and dirty what changed since.
	dag   *dag.DAG
	dirty dagDirty
}

// New returns an engine that has built nothing; the first Update with
// every object of snap builds everything.
func New(snap *objects.Snapshot, cfg Config) *Engine {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	e := &Engine{
		cfg:       cfg,
		snap:      snap,
		exts:      dag.Extensions{},
		extClaims: map[types.NamespacedName]*dnsClaim{},
		roots:     map[types.NamespacedName]*rootUnit{},
		claims:    newClaims(),
		statuses:  newStatusTable(),
		shared:    newSharedTables(),
		targets:   map[xdsres.Group]Targets{},
		dirty:     newDAGDirty(),
	}
	for _, g := range xdsres.Groups {
		e.targets[g] = Targets{}
		for _, t := range xdsres.TypesOf(g) {
			e.targets[g][t] = xdsres.NewSet(0)
		}
	}
	// Each index checks a candidate against the keys its unit was
	// indexed under: a root's result, an ExtensionService's.
	e.rootDeps = newDepIndex(func(u unit) []objects.Key { return u.(*rootUnit).res.Deps })
	e.extDeps = newDepIndex(func(u unit) []objects.Key { return e.exts[types.NamespacedName(u.(extUnit))].Deps })
	for range workers() {
		e.keyPairs = append(e.keyPairs, dag.NewKeyPairCache())
	}
	e.cfg.DAG.KeyPairs = e.keyPairs[0]
	e.https.init(cfg.Translator)
	e.fallback.init()
	return e
}

// Targets returns a group's complete resources. The maps belong to the
// engine: callers must not modify them, and they change with every Update.
func (e *Engine) Targets(g xdsres.Group) Targets {
	if e.degraded {
		return e.ref.Targets[g]
	}
	return e.targets[g]
}

// Statuses returns the status of every object the last build read, sorted
// by key, as dag.Build reports them.
func (e *Engine) Statuses() []*dag.Status {
	if e.degraded {
		return e.ref.Statuses
	}
	return e.statuses.sorted()
}

// StatusUpdate returns what the last Update changed in the statuses: all
// of them after the first update (or in degraded mode), else the ones it
// recomputed.
func (e *Engine) StatusUpdate() dag.StatusUpdate {
	if e.degraded || e.generation <= 1 {
		return dag.StatusUpdate{All: true, Changed: e.Statuses()}
	}
	return e.statuses.update()
}

// DAG returns the graph of the last build, as dag.Build would return it.
func (e *Engine) DAG() *dag.DAG {
	if e.degraded {
		return e.ref.DAG
	}
	return e.view()
}

// Degraded reports whether the engine has fallen back to full builds: two
// different backend sets hashed to one cluster name (a 64-bit collision),
// which Assemble settles by claim order across every root, and which this
// engine does not track. It then rebuilds everything on every update.
func (e *Engine) Degraded() bool { return e.degraded }

// Update recomputes what the changes affect and returns what changed.
// A resource that fails to encode (a string that is not UTF-8) is left out
// and the first such error returned; everything else is up to date.
func (e *Engine) Update(ch Changes) (*Delta, error) {
	e.generation++
	e.u = newUpdate(e.generation, len(ch.Objects))
	e.u.initial = e.generation == 1
	defer func() { e.u = nil }()
	// The first update's maps are made beside its set of changed keys,
	// which presize does not read: at 10,000 roots each takes tens of
	// milliseconds on the one goroutine that runs before the roots do.
	var presized chan struct{}
	if e.generation == 1 {
		presized = make(chan struct{})
		go func() {
			defer close(presized)
			e.presize()
		}()
	}
	for _, k := range ch.Objects {
		e.u.changed[k] = true
	}
	if presized != nil {
		<-presized
	}

	oldExts := e.rebuildExtensions()
	dirtyRoots := e.rebuildRoots()
	if e.u.initial {
		e.presizeRootTargets(dirtyRoots)
	}
	recontribute := e.claims.settleFQDNs(dirtyRoots)

	for nn, old := range oldExts {
		e.retractExtension(nn, old)
	}
	for _, r := range recontribute {
		e.retractRoot(r)
	}
	for nn := range oldExts {
		if ext := e.exts[nn]; ext != nil {
			e.addExtension(ext)
		}
	}
	e.addRoots(dirtyRoots, recontribute)
	for _, r := range recontribute {
		if r.res == nil {
			delete(e.roots, r.nn)
		}
	}
	e.publishHTTPListener()
	e.releaseUnused()
	e.computePending()
	e.settleDNS()
	e.refreshEndpoints(ch)
	e.touchObjectStatuses()
	e.statuses.recompute(e)
	e.updateMesh(ch)
	e.publishFallback()
	e.https.publish(e)
	e.keepKeyPairsSmall()

	if e.degraded {
		d := e.rebuildReference()
		d.Assignments = e.u.assignments
		return d, e.u.err
	}
	if e.u.initial {
		return &Delta{All: true, Assignments: e.u.assignments}, e.u.err
	}
	d := e.u.delta(e.targets)
	d.Assignments = e.u.assignments
	return d, e.u.err
}

// presize makes the engine's maps, before the first update fills them, as
// large as the snapshot says they will get: growing a map of a hundred
// thousand entries by doubling rehashes it over and over, on the one
// goroutine the bookkeeping runs on. A map never shrinks, so a hint too
// large is paid for as long as the engine lives; one too small only costs
// the growing.
func (e *Engine) presize() {
	s := e.snap
	proxies, services := len(s.HTTPProxies), len(s.Services)
	// Only roots (proxies with a virtual host) make a unit, claim a name
	// and own route configurations; included proxies add routes.
	// A route's weighted Services make one cluster: sizing the clusters by
	// the Services would keep maps several times too large for good.
	roots, routes := 0, len(s.ExtensionServices)
	for _, p := range s.HTTPProxies {
		if p.Spec.VirtualHost != nil {
			roots++
		}
		routes += len(p.Spec.Routes)
	}
	clusters := min(services, routes)
	e.roots = make(map[types.NamespacedName]*rootUnit, roots)
	e.rootDeps.presize(proxies + services + len(s.Secrets))
	e.claims.fqdn = make(map[string][]*rootUnit, roots)
	e.claims.dns = make(map[string][]*dnsClaim, roots)
	e.claims.touched = make(map[string]bool, roots)
	e.shared.clusters = make(map[string]*clusterEntry, clusters)
	e.shared.byService = newServiceIndex(services)
	e.shared.dns = make(map[string]*dnsEntry, roots)
	n := proxies + len(s.ExtensionServices) + len(s.Delegations)
	e.statuses.parts = make(map[objects.Key][]part, n)
	e.statuses.current = make(map[objects.Key]*dag.Status, n)
	e.statuses.touched = make(map[objects.Key]bool, n)
	hint := map[string]int{
		resource.ClusterType: clusters, resource.EndpointType: clusters, resource.RouteType: roots,
		resource.ScopedRouteType: roots, resource.ListenerType: roots, resource.SecretType: len(s.Secrets),
	}
	for _, g := range xdsres.Groups {
		if g == xdsres.GroupMesh && !e.cfg.DAG.Mesh {
			continue // without the mesh its group stays empty
		}
		for _, t := range xdsres.TypesOf(g) {
			if rootSized[g][t] {
				continue // presizeRootTargets knows better
			}
			n := hint[t]
			if g == xdsres.GroupDNS {
				n = roots // one cluster and assignment per name a root claims
			}
			e.targets[g][t] = xdsres.NewSet(n)
		}
	}
	e.targets[xdsres.GroupEnvoy][resource.ListenerType] = xdsres.NewSet(0)
}

// rootSized are the maps of the resources only roots make: the first
// update sizes them once the roots are translated (presizeRootTargets).
var rootSized = map[xdsres.Group]map[string]bool{
	xdsres.GroupEnvoy: {resource.ScopedRouteType: true, resource.RouteType: true},
	xdsres.GroupGRPC:  {resource.RouteType: true, resource.ListenerType: true},
}

// presizeRootTargets makes the maps of rootSized as large as the first
// update's translations say: presize could only guess from the objects,
// and a root makes a gRPC listener per address and port it serves on, and
// one or two HTTP route configurations.
func (e *Engine) presizeRootTargets(list []*rootUnit) {
	n := map[xdsres.Group]map[string]int{xdsres.GroupEnvoy: {}, xdsres.GroupGRPC: {}}
	for _, r := range list {
		if o := r.out; o != nil {
			n[xdsres.GroupEnvoy][resource.ScopedRouteType] += countNonNil(o.scoped)
			n[xdsres.GroupEnvoy][resource.RouteType] += countNonNil(o.http, o.https)
			n[xdsres.GroupGRPC][resource.RouteType] += countNonNil(o.grpcRC)
			n[xdsres.GroupGRPC][resource.ListenerType] += len(o.grpcLis)
		}
	}
	// The fallback certificate's route configuration is one no root makes.
	n[xdsres.GroupEnvoy][resource.RouteType]++
	for g, types := range rootSized {
		for t := range types {
			if e.targets[g][t].Len() == 0 {
				e.targets[g][t] = xdsres.NewSet(n[g][t])
			}
		}
	}
}

func countNonNil(rs ...*xdsres.Resource) int {
	n := 0
	for _, r := range rs {
		if r != nil {
			n++
		}
	}
	return n
}

// keepKeyPairsSmall forgets the remembered certificate checks when they
// outnumber the Secrets, so that replaced certificates do not pile up.
func (e *Engine) keepKeyPairsSmall() {
	for i, c := range e.keyPairs {
		if c.Len() > 2*len(e.snap.Secrets)+64 {
			e.keyPairs[i] = dag.NewKeyPairCache()
		}
	}
	e.cfg.DAG.KeyPairs = e.keyPairs[0]
}

// rebuildReference recomputes everything with a full build, for a
// degraded engine, and returns the difference from the last one.
func (e *Engine) rebuildReference() *Delta {
	next := Reference(e.snap, e.cfg.DAG, e.cfg.Translator)
	prev := e.ref
	if prev == nil {
		e.cfg.Log.Error("two different backend sets hash to the same cluster name; building everything on every change from now on")
		prev = &ReferenceResult{Targets: e.targets}
	}
	e.ref = next
	delta := &Delta{}
	for g, byType := range next.Targets {
		for t, byName := range byType {
			old := prev.Targets[g][t]
			for name, r := range byName.All() {
				if o := old.Get(name); o == nil || o.Version != r.Version {
					delta.set(g, t, name, Change{Old: o, New: r})
				}
			}
			for name, o := range old.All() {
				if byName.Get(name) == nil {
					delta.set(g, t, name, Change{Old: o})
				}
			}
		}
	}
	return delta
}

func (d *Delta) set(g xdsres.Group, t, name string, c Change) {
	if d.Changes == nil {
		d.Changes = map[xdsres.Group]map[string]map[string]Change{}
	}
	if d.Changes[g] == nil {
		d.Changes[g] = map[string]map[string]Change{}
	}
	if d.Changes[g][t] == nil {
		d.Changes[g][t] = map[string]Change{}
	}
	d.Changes[g][t][name] = c
}

// update is the state of one Update.
type update struct {
	generation uint64
	changed    map[objects.Key]bool
	// before holds, per group, type and name, the resource a target had
	// before the update first changed it.
	before map[xdsres.Group]map[string]map[string]*xdsres.Resource
	// initial is set for the first update, which starts from nothing and
	// so need not remember what it replaced.
	initial bool
	// assignments counts the load assignments computed.
	assignments int
	// pending are the clusters whose resources are still to make.
	pending []*clusterEntry
	// unused are the clusters and secrets whose count fell to 0; those
	// still at 0 once every unit is added are deleted (releaseUnused), so
	// that a rebuilt root reusing them does not make them again.
	unusedGRPC     []*clusterEntry
	unusedClusters []*clusterEntry
	unusedSecrets  []*secretEntry
	err            error
}

// newUpdate starts an update of n changed objects: the first holds every
// object of the snapshot, and growing its set by doubling would rehash a
// hundred thousand keys over and over.
func newUpdate(generation uint64, n int) *update {
	return &update{
		generation: generation,
		changed:    make(map[objects.Key]bool, n),
		before:     map[xdsres.Group]map[string]map[string]*xdsres.Resource{},
	}
}

// set changes one target resource (nil deletes it), remembering what it was.
func (e *Engine) set(g xdsres.Group, t, name string, r *xdsres.Resource) {
	byName, h := e.targets[g][t], xdsres.Hash(name)
	if e.u.initial {
		if r == nil {
			byName.DeleteHashed(name, h)
		} else {
			byName.PutHashed(name, h, r)
		}
		return
	}
	b := e.u.before[g]
	if b == nil {
		b = map[string]map[string]*xdsres.Resource{}
		e.u.before[g] = b
	}
	if b[t] == nil {
		b[t] = map[string]*xdsres.Resource{}
	}
	if _, seen := b[t][name]; !seen {
		b[t][name] = byName.GetHashed(name, h)
	}
	if r == nil {
		byName.DeleteHashed(name, h)
	} else {
		byName.PutHashed(name, h, r)
	}
}

// delta lists what differs from before the update, by content.
func (u *update) delta(targets map[xdsres.Group]Targets) *Delta {
	d := &Delta{}
	for g, byType := range u.before {
		for t, byName := range byType {
			for name, old := range byName {
				now := targets[g][t].Get(name)
				switch {
				case now == nil && old == nil:
				case now == nil || old == nil || old.Version != now.Version:
					d.set(g, t, name, Change{Old: old, New: now})
				default:
					// Same content: keep the resource clients hold, so
					// that identity follows content.
					targets[g][t].Put(name, old)
				}
			}
		}
	}
	return d
}
