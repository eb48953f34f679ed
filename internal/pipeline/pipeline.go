// Package pipeline turns batches of object changes into xDS resources in
// the cache: it applies the changes to its snapshot, rebuilds the DAG,
// translates it for every consumer group, and hands the cache the
// resources, which pushes what changed.
//
// An endpoint change is not a rebuild (DESIGN.md decision 4): when a batch
// holds only EndpointSlice and Node changes, only the load assignments
// that read the affected Services are recomputed, through an index kept
// from the last build.
//
// A Pipeline is used by one goroutine; it does no I/O of its own besides
// the cache it feeds.
package pipeline

import (
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
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
}

// Pipeline owns the snapshot and the results of the last build.
type Pipeline struct {
	cfg   Config
	cache *xdscache.Cache
	snap  *objects.Snapshot
	last  *dag.Result
	// index maps a Service to the load assignments that read it, per group.
	index   map[types.NamespacedName][]claRef
	built   bool
	stagers map[xdscache.Group]*stager
}

// claRef is one load assignment of one group and the spec it is built from.
type claRef struct {
	group xdscache.Group
	name  string
	spec  *dag.ClusterSpec
}

// New returns a pipeline feeding the cache.
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
	p := &Pipeline{cfg: cfg, cache: c, snap: objects.NewSnapshot(), index: map[types.NamespacedName][]claRef{}, stagers: map[xdscache.Group]*stager{}}
	for _, g := range groups {
		p.stagers[g.name] = newStager(g.staged, g.warmupRoutes, cfg.Warmup, cfg.Linger)
	}
	return p
}

// Result says what one Apply did.
type Result struct {
	// Full is true when the DAG was rebuilt, false for the endpoint path.
	Full bool
	// Assignments is the number of load assignments recomputed on the
	// endpoint path.
	Assignments int
	Duration    time.Duration
	// Statuses are the statuses of the last full build.
	Statuses []*dag.Status
	// Next is when Tick must be called to publish the next stage; zero
	// when nothing is pending.
	Next time.Time
}

// Apply applies a batch of changes and updates the cache.
func (p *Pipeline) Apply(changes []objects.Change) (Result, error) {
	start := time.Now()
	affected, endpointsOnly := p.endpointScope(changes)
	for _, c := range changes {
		if err := p.snap.Apply(c); err != nil {
			return Result{}, err
		}
	}
	var res Result
	var err error
	if p.built && endpointsOnly {
		res, err = p.endpoints(affected)
	} else {
		res, err = p.full()
	}
	res.Duration = time.Since(start)
	res.Statuses = p.Statuses()
	res.Next = p.next()
	p.cfg.Metrics.observe(res, err)
	return res, err
}

// Statuses returns the statuses of the last full build.
func (p *Pipeline) Statuses() []*dag.Status {
	if p.last == nil {
		return nil
	}
	return p.last.Statuses
}

// DAG returns the last built DAG, nil before the first build.
func (p *Pipeline) DAG() *dag.DAG {
	if p.last == nil {
		return nil
	}
	return p.last.DAG
}

// Snapshot returns the pipeline's snapshot; callers must not modify it.
func (p *Pipeline) Snapshot() *objects.Snapshot { return p.snap }

// endpointScope reports whether a batch changes only endpoints (slices and
// nodes), and which Services' load assignments it affects; nil means all
// (a Node change can drain endpoints of any Service). It reads the slices
// before the batch is applied, so a slice moving between Services counts
// for both.
func (p *Pipeline) endpointScope(changes []objects.Change) (map[types.NamespacedName]bool, bool) {
	affected := map[types.NamespacedName]bool{}
	for _, c := range changes {
		switch c.Key.Kind {
		case objects.KindEndpointSlice:
			if old := p.snap.EndpointSlices[c.Key.NamespacedName()]; old != nil {
				if svc, ok := objects.SliceService(old); ok {
					affected[svc] = true
				}
			}
			if es, ok := c.Object.(interface{ GetLabels() map[string]string }); ok && c.Object != nil {
				if name := es.GetLabels()[objects.ServiceNameLabel]; name != "" {
					affected[types.NamespacedName{Namespace: c.Key.Namespace, Name: name}] = true
				}
			}
		case objects.KindNode:
			affected = nil
		default:
			return nil, false
		}
		if affected == nil {
			return nil, true
		}
	}
	return affected, true
}

// Tick publishes the stages that are due and returns when to call it
// again (zero when nothing is pending).
func (p *Pipeline) Tick() (time.Time, error) {
	now := p.cfg.Now()
	for _, g := range groups {
		out, _ := p.stagers[g.name].stage(nil, now)
		if err := p.cache.Replace(g.name, out); err != nil {
			return time.Time{}, err
		}
	}
	return p.next(), nil
}

// next is the earliest pending stage of any group.
func (p *Pipeline) next() time.Time {
	var next time.Time
	now := p.cfg.Now()
	for _, g := range groups {
		if t := p.stagers[g.name].peek(now); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// full rebuilds the DAG and every group's resources.
func (p *Pipeline) full() (Result, error) {
	res := dag.Build(p.snap, p.cfg.DAG)
	p.last = res
	index := map[types.NamespacedName][]claRef{}
	now := p.cfg.Now()
	for _, g := range groups {
		tr := g.translate(res.DAG, p.snap, p.cfg.Translator)
		byType, err := encode(tr, g.types)
		if err != nil {
			return Result{Full: true}, fmt.Errorf("group %s: %w", g.name, err)
		}
		out, _ := p.stagers[g.name].stage(byType, now)
		if err := p.cache.Replace(g.name, out); err != nil {
			return Result{Full: true}, err
		}
		for t, rs := range byType {
			p.cfg.Metrics.Resources.WithLabelValues(string(g.name), shortType(t)).Set(float64(len(rs)))
		}
		for _, ref := range g.assignments(res.DAG) {
			for _, b := range ref.spec.Backends {
				index[b.Service] = append(index[b.Service], claRef{group: g.name, name: ref.name, spec: ref.spec})
			}
		}
	}
	p.index = index
	p.built = true
	return Result{Full: true}, nil
}

// endpoints recomputes the load assignments that read the affected
// Services (all of them when affected is nil) and pushes only those.
func (p *Pipeline) endpoints(affected map[types.NamespacedName]bool) (Result, error) {
	type key struct {
		group xdscache.Group
		name  string
	}
	todo := map[key]*dag.ClusterSpec{}
	for svc, refs := range p.index {
		if affected != nil && !affected[svc] {
			continue
		}
		for _, r := range refs {
			todo[key{r.group, r.name}] = r.spec
		}
	}
	changes := map[xdscache.Group][]xdscache.Change{}
	fresh := map[xdscache.Group]map[string]*xdscache.Resource{}
	for k, spec := range todo {
		cla := groupByName[k.group].loadAssignment(k.name, spec, p.snap, p.cfg.Translator)
		r, err := xdscache.NewResource(cla)
		if err != nil {
			return Result{}, err
		}
		changes[k.group] = append(changes[k.group], xdscache.Change{TypeURL: xdscache.TypeURL(cla), Name: k.name, Resource: r})
		if fresh[k.group] == nil {
			fresh[k.group] = map[string]*xdscache.Resource{}
		}
		fresh[k.group][k.name] = r
	}
	for _, g := range groups {
		if err := p.cache.Update(g.name, changes[g.name]); err != nil {
			return Result{}, err
		}
		p.stagers[g.name].updateEndpoints(fresh[g.name])
	}
	return Result{Assignments: len(todo)}, nil
}

// encode turns a translation into cache resources by type URL. Every type
// the group serves is listed, even when empty, so that Replace deletes
// what is gone; other types are left out.
func encode(r *translator.Resources, types []string) (map[string][]*xdscache.Resource, error) {
	out := map[string][]*xdscache.Resource{}
	serves := map[string]bool{}
	for _, t := range types {
		serves[t] = true
	}
	add := func(typeURL string, msgs []proto.Message) error {
		if !serves[typeURL] {
			return nil
		}
		rs := make([]*xdscache.Resource, 0, len(msgs))
		for _, m := range msgs {
			res, err := xdscache.NewResource(m)
			if err != nil {
				return err
			}
			rs = append(rs, res)
		}
		out[typeURL] = rs
		return nil
	}
	for _, t := range []struct {
		url  string
		msgs []proto.Message
	}{
		{typeListener, messages(r.Listeners)},
		{typeScopedRoute, messages(r.ScopedRoutes)},
		{typeRoute, messages(r.Routes)},
		{typeCluster, messages(r.Clusters)},
		{typeEndpoint, messages(r.Endpoints)},
		{typeSecret, messages(r.Secrets)},
	} {
		if err := add(t.url, t.msgs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func messages[T proto.Message](in []T) []proto.Message {
	out := make([]proto.Message, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}

// shortType strips the type URL prefix for metric labels.
func shortType(typeURL string) string {
	const prefix = "type.googleapis.com/"
	if len(typeURL) > len(prefix) && typeURL[:len(prefix)] == prefix {
		return typeURL[len(prefix):]
	}
	return typeURL
}
