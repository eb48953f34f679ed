// Package pipeline turns batches of object changes into xDS resources in
// the cache: it applies the changes to its snapshot, has the incremental
// engine recompute what they affect (internal/incremental), stages the
// result make-before-break (staging.go) and hands the cache what changed,
// which pushes it.
//
// An endpoint change is not a rebuild (site/architecture.md, decision 4): the DAG does
// not read EndpointSlices, so a batch of EndpointSlice and Node changes
// recomputes only the load assignments of the Services concerned.
//
// A Pipeline is used by one goroutine; it does no I/O of its own besides
// the cache it feeds.
package pipeline

import (
	"errors"
	"log/slog"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Config is what a pipeline builds with.
type Config struct {
	DAG        dag.Options
	Translator translator.Options
	Log        *slog.Logger
	Metrics    *Metrics
	// Warmup and Linger are the make-before-break delays (staging.go);
	// zero means DefaultWarmup and DefaultLinger.
	Warmup, Linger time.Duration
	// Now is the clock, time.Now when nil.
	Now func() time.Time
	// Gateways are the further gateways served besides the default one
	// (DAG.IngressClassName), each named for the ingress class of its
	// proxies (gateways.go).
	Gateways []string
	// Snapshot, when set, is the snapshot the pipeline starts from
	// instead of an empty one, and owns from then on; ApplySnapshot
	// builds what it holds. For a caller that has read every object
	// already (render): applying them one by one to a new snapshot would
	// make a second copy of its maps.
	Snapshot *objects.Snapshot
}

// Pipeline owns the snapshot and the engine that builds from it.
type Pipeline struct {
	cfg     Config
	cache   *xdscache.Cache
	snap    *objects.Snapshot
	engine  *incremental.Engine
	built   bool
	stagers map[xdsres.Group]*stager
	// gateways are the pipelines of Config.Gateways (gateways.go).
	gateways []*Pipeline
	// gate stands between the engine and the stagers (gate.go); conds
	// are its conditions as of the last batch.
	gate  *Gate
	conds Conditions
	// warns are the EndpointInvalid warnings as of the last batch, worked
	// out by endpoints (endpointwarn.go).
	warns     Conditions
	endpoints endpointWarnings
	// warming is true from BeginWarmup to EndWarmup (warmup.go).
	warming bool
}

// New returns a pipeline feeding the cache. With a nil cache it feeds
// none, for a caller that reads one build and serves nothing (render):
// every group's build is still gated, so Served, Rejected and Statuses are
// what a served pipeline's would be, but nothing is staged or published,
// which would only cost the time and the memory of a copy never read.
func New(c *xdscache.Cache, cfg Config) *Pipeline {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(nil)
	}
	if cfg.Warmup <= 0 {
		cfg.Warmup = DefaultWarmup
	}
	if cfg.Linger <= 0 {
		cfg.Linger = DefaultLinger
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	snap := cfg.Snapshot
	if snap == nil {
		snap = objects.NewSnapshot()
	}
	gate := NewGate()
	p := &Pipeline{
		cfg: cfg, cache: c, snap: snap,
		engine:  incremental.New(snap, incremental.Config{DAG: cfg.DAG, Translator: cfg.Translator, Log: cfg.Log, Inspect: gate.record}),
		stagers: map[xdsres.Group]*stager{},
		gate:    gate,
	}
	if c != nil {
		for _, g := range groups {
			p.stagers[g.name] = newStager(g.staged, g.warmupRoutes, cfg.Warmup, cfg.Linger)
		}
		c.SetDefaultGateway(cfg.DAG.IngressClassName)
	}
	p.newGateways()
	return p
}

// Result says what one Apply did.
type Result struct {
	// Full is true when the batch could change the DAG (anything but
	// EndpointSlices and Nodes), false for the endpoint path.
	Full bool
	// Assignments is the number of load assignments recomputed, in every
	// group.
	Assignments int
	Duration    time.Duration
	// StatusUpdate is what this batch changed in the statuses; Statuses
	// returns all of them.
	StatusUpdate dag.StatusUpdate
	// Next is when Tick must be called to publish the next stage; zero
	// when nothing is pending.
	Next time.Time
}

// Apply applies a batch of changes and updates the cache.
func (p *Pipeline) Apply(changes []objects.Change) (Result, error) {
	return p.apply(changes, false)
}

// ApplySnapshot applies every object of the pipeline's snapshot as a
// batch (SnapshotChanges): the first build of one made with
// Config.Snapshot. The snapshot holds them already, and applying an
// object it holds changes nothing, so they are not applied again.
func (p *Pipeline) ApplySnapshot() (Result, error) {
	return p.apply(SnapshotChanges(p.snap), true)
}

// apply is Apply; held says that the snapshot holds the changes already.
func (p *Pipeline) apply(changes []objects.Change, held bool) (Result, error) {
	start := time.Now()
	ch, endpointsOnly := p.scope(changes)
	if !held {
		if err := p.snap.ApplyAll(changes); err != nil {
			return Result{}, err
		}
	}
	res := Result{Full: !p.built || !endpointsOnly}
	if !p.built {
		// The first build makes about a resource per object, each
		// inspected as it is encoded.
		p.gate.expect(len(changes))
	}
	delta, err := p.engine.Update(ch)
	p.built = true
	if delta != nil {
		res.Assignments = delta.Assignments
		if perr := p.publish(delta); err == nil {
			err = perr
		}
	}
	rejected := p.gate.Rejected()
	p.countWithheld(rejected)
	conds := RejectionConditions(rejected, p.engine.Owners)
	// Owners change with full builds, so the warnings are recomputed
	// whenever there are any; with none this costs nothing.
	p.endpoints.update(p.engine, p.snap, ch, delta)
	warns := p.endpoints.conditions(p.engine.Owners)
	res.StatusUpdate = p.patchUpdate(p.engine.StatusUpdate(), conds, warns)
	p.conds, p.warns = conds, warns
	if gerr := p.applyGateways(changes, &res); err == nil {
		err = gerr
	}
	res.Next = p.next()
	res.Duration = time.Since(start)
	p.cfg.Metrics.observe(res, err)
	return res, err
}

// publish passes every group's changes through the gate, stages what
// passed and hands the cache what is due, when there is a cache. Smaller
// builds do so group by group, sparing a goroutine per group where it
// would save microseconds; a build of everything passes every group at
// once (publishAll).
func (p *Pipeline) publish(delta *incremental.Delta) error {
	now := p.cfg.Now()
	p.gate.Begin()
	defer p.gate.End()
	if delta.All {
		defer xdscheck.ForgetClean()
		return p.publishAll(now)
	}
	for _, g := range groups {
		if p.cache == nil {
			// Nothing is staged: what changed is not listed.
			served, _, _, fresh := p.gate.pass(g.name, p.engine.Targets(g.name), delta.Changes[g.name], false, nil)
			p.withheld(fresh)
			p.countServed(g.name, served)
			continue
		}
		served, changes, fresh := p.gate.Pass(g.name, p.engine.Targets(g.name), delta.Changes[g.name], false)
		p.withheld(fresh)
		p.countServed(g.name, served)
		if err := p.hand(g, served, changes, false, now); err != nil {
			return err
		}
	}
	return nil
}

// publishAll is publish for a build of everything: the groups pass the
// gate at once (Gate.PassAll), and each group's staging and cache update
// follow its own pass, beside the others'. At 10,000 roots each of those
// steps takes a few hundred milliseconds. What newly failed is logged and
// counted once all have passed, in the order of the groups.
func (p *Pipeline) publishAll(now time.Time) error {
	names := make([]xdsres.Group, len(groups))
	targets := make([]incremental.Targets, len(groups))
	for i, g := range groups {
		names[i], targets[i] = g.name, p.engine.Targets(g.name)
	}
	errs := make([]error, len(groups))
	var then func(int, incremental.Targets)
	if p.cache != nil {
		then = func(i int, served incremental.Targets) { errs[i] = p.hand(groups[i], served, nil, true, now) }
	}
	served, fresh := p.gate.PassAll(names, targets, then)
	for i, g := range groups {
		p.withheld(fresh[i])
		p.countServed(g.name, served[i])
	}
	return errors.Join(errs...)
}

// hand stages a group's gated build and gives the cache what is due.
func (p *Pipeline) hand(g groupDef, served incremental.Targets, changes map[string]map[string]incremental.Change, all bool, now time.Time) error {
	var out []xdsres.Change
	if p.warming {
		out = unstaged(served, changes, all)
	} else {
		out = p.stagers[g.name].stage(served, changes, all, now)
	}
	return p.cache.Update(g.name, out)
}

// countServed sets the gauges of how many resources of each type a group
// is served.
func (p *Pipeline) countServed(g xdsres.Group, served incremental.Targets) {
	for t, byName := range served {
		p.cfg.Metrics.Resources.WithLabelValues(string(g), xdsres.ShortType(t)).Set(float64(byName.Len()))
	}
}

// Statuses returns the status of every object, as of the last batch,
// with the gate's conditions.
func (p *Pipeline) Statuses() []*dag.Status {
	if !p.built {
		return nil
	}
	out := PatchStatuses(p.engine.Statuses(), p.conds, p.warns)
	if len(p.gateways) == 0 {
		return out
	}
	// A new slice: the engine's list is shared and must not be appended to.
	gw := p.gatewayStatuses()
	all := make([]*dag.Status, 0, len(out)+len(gw))
	all = append(append(all, out...), gw...)
	sort.Slice(all, func(i, j int) bool { return all[i].Key.Less(all[j].Key) })
	return all
}

// Served returns what the gate lets through to a group's clients, before
// staging; callers must not modify it.
func (p *Pipeline) Served(g xdsres.Group) incremental.Targets { return p.gate.served[g] }

// Rejected lists the resources the gate withholds now.
func (p *Pipeline) Rejected() []Rejection { return p.gate.Rejected() }

// countWithheld sets the gauge of what the gate withholds, every group
// and type included so that a type that recovers reads 0.
func (p *Pipeline) countWithheld(rejected []Rejection) {
	n := map[incremental.ResourceRef]int{}
	for _, rj := range rejected {
		n[incremental.ResourceRef{Group: rj.Group, Type: rj.Type}]++
	}
	for _, g := range xdsres.Groups {
		for _, t := range xdsres.TypesOf(g) {
			p.cfg.Metrics.WithheldNow.WithLabelValues(p.cfg.DAG.IngressClassName, string(g), xdsres.ShortType(t)).Set(float64(n[incremental.ResourceRef{Group: g, Type: t}]))
		}
	}
}

// withheld counts and logs the resources that newly failed the gate.
func (p *Pipeline) withheld(fresh []Rejection) {
	for _, rj := range fresh {
		typ := xdsres.ShortType(rj.Type)
		p.cfg.Metrics.Withheld.WithLabelValues(p.cfg.DAG.IngressClassName, string(rj.Group), typ).Inc()
		p.cfg.Log.Warn("withholding a resource that fails validation; clients keep its last good version",
			"gateway", p.cfg.DAG.IngressClassName, "group", rj.Group, "type", typ, "name", rj.Name, "error", rj.Err)
	}
}

// DAG returns the last built DAG, nil before the first build.
func (p *Pipeline) DAG() *dag.DAG {
	if !p.built {
		return nil
	}
	return p.engine.DAG()
}

// Snapshot returns the pipeline's snapshot; callers must not modify it.
func (p *Pipeline) Snapshot() *objects.Snapshot { return p.snap }

// scope turns a batch into the engine's Changes: the keys, and the
// Services whose endpoints a slice change touches, read before the batch
// is applied so that a slice moving between Services counts for both. It
// also reports whether the batch changes only endpoints (slices and
// nodes).
func (p *Pipeline) scope(changes []objects.Change) (incremental.Changes, bool) {
	ch := incremental.Changes{Objects: make([]objects.Key, 0, len(changes)), Endpoints: map[types.NamespacedName]bool{}}
	// A first build computes every Service's endpoints: naming each of
	// them (66,000 at 10,000 roots) would only fill a map.
	ch.AllEndpoints = !p.built
	endpointsOnly := true
	for _, c := range changes {
		ch.Objects = append(ch.Objects, c.Key)
		if p.built && p.snap.EndpointScope(c, ch.Endpoints) {
			ch.AllEndpoints = true
		}
		if k := c.Key.Kind; k != objects.KindEndpointSlice && k != objects.KindNode {
			endpointsOnly = false
		}
	}
	return ch, endpointsOnly
}

// Tick publishes the stages that are due and returns when to call it
// again (zero when nothing is pending).
func (p *Pipeline) Tick() (time.Time, error) {
	now := p.cfg.Now()
	for _, g := range groups {
		s := p.stagers[g.name]
		if s == nil {
			continue // no cache: nothing is staged
		}
		if err := p.cache.Update(g.name, s.tick(now)); err != nil {
			return time.Time{}, err
		}
	}
	for _, gw := range p.gateways {
		if _, err := gw.Tick(); err != nil {
			return time.Time{}, err
		}
	}
	return p.next(), nil
}

// next is the earliest pending stage of any group.
func (p *Pipeline) next() time.Time {
	var next time.Time
	now := p.cfg.Now()
	for _, s := range p.stagers {
		if t := s.next(now); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, gw := range p.gateways {
		if t := gw.next(); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// SnapshotChanges lists every object of a snapshot as an upsert: the
// first batch of a pipeline that builds the snapshot whole.
func SnapshotChanges(snap *objects.Snapshot) []objects.Change {
	// Sized at once: a snapshot of 10,000 proxies has over 100,000 objects.
	out := make([]objects.Change, 0, len(snap.HTTPProxies)+len(snap.ExtensionServices)+len(snap.Delegations)+
		len(snap.Services)+len(snap.EndpointSlices)+len(snap.Secrets)+len(snap.Nodes)+len(snap.Namespaces)+
		len(snap.TrafficSplits)+len(snap.HTTPRouteGroups)+len(snap.TrafficTargets)+len(snap.Pods))
	add := func(kind objects.Kind, nn types.NamespacedName, obj runtime.Object) {
		out = append(out, objects.Change{Key: objects.NewKey(kind, nn), Object: obj})
	}
	for nn, o := range snap.HTTPProxies {
		add(objects.KindHTTPProxy, nn, o)
	}
	for nn, o := range snap.ExtensionServices {
		add(objects.KindExtensionService, nn, o)
	}
	for nn, o := range snap.Delegations {
		add(objects.KindTLSCertificateDelegation, nn, o)
	}
	for nn, o := range snap.Services {
		add(objects.KindService, nn, o)
	}
	for nn, o := range snap.EndpointSlices {
		add(objects.KindEndpointSlice, nn, o)
	}
	for nn, o := range snap.Secrets {
		add(objects.KindSecret, nn, o)
	}
	for name, o := range snap.Nodes {
		add(objects.KindNode, types.NamespacedName{Name: name}, o)
	}
	for name, o := range snap.Namespaces {
		add(objects.KindNamespace, types.NamespacedName{Name: name}, o)
	}
	for nn, o := range snap.TrafficSplits {
		add(objects.KindTrafficSplit, nn, o)
	}
	for nn, o := range snap.HTTPRouteGroups {
		add(objects.KindHTTPRouteGroup, nn, o)
	}
	for nn, o := range snap.TrafficTargets {
		add(objects.KindTrafficTarget, nn, o)
	}
	for nn, o := range snap.Pods {
		add(objects.KindPod, nn, o)
	}
	return out
}
