package pipeline

import (
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// Gateways (site/gateways.md): one control plane serves several
// independent load balancers. A gateway is a slice of the configuration:
// the HTTPProxies whose spec.ingressClassName is its name. The default
// gateway is the Pipeline itself (Config.DAG.IngressClassName, "" for
// proxies without a class); each further gateway, listed in
// Config.Gateways, gets a pipeline of its own over the same objects,
// feeding a cache of its own (xdscache.Cache.AddGateway), so that its
// nodes never receive another gateway's listeners, routes, clusters or
// secrets.
//
// The cost of this simple design is memory: every gateway keeps its own
// snapshot maps (pointing at the same decoded objects, which are not
// copied) and its own incremental engine state, and every batch is applied
// to each gateway. Each engine stays byte-identical to a full build of its
// slice, as the single-gateway engine is.

// newGateways makes the pipelines of the further gateways.
func (p *Pipeline) newGateways() {
	for _, name := range p.cfg.Gateways {
		if name == p.cfg.DAG.IngressClassName {
			continue
		}
		cfg := p.cfg
		cfg.Gateways = nil
		// Its own maps: a batch is applied to every gateway's snapshot.
		cfg.Snapshot = nil
		cfg.DAG.IngressClassName = name
		cfg.Metrics = p.cfg.Metrics.forGateway()
		var c *xdscache.Cache
		if p.cache != nil {
			c = p.cache.AddGateway(name)
		}
		p.gateways = append(p.gateways, New(c, cfg))
	}
}

// applyGateways applies a batch to every further gateway and folds what
// they say about the objects they serve into res.
func (p *Pipeline) applyGateways(changes []objects.Change, res *Result) error {
	var first error
	for _, gw := range p.gateways {
		r, err := gw.Apply(changes)
		if err != nil && first == nil {
			first = err
		}
		res.Assignments += r.Assignments
		if res.StatusUpdate.All {
			// A complete update replaces every status its consumers hold
			// (the etcd writer deletes the others), so it must list every
			// gateway's, not only what this batch changed in them.
			res.StatusUpdate.Changed = append(res.StatusUpdate.Changed, ownStatuses(gw.Statuses())...)
			continue
		}
		res.StatusUpdate.Changed = append(res.StatusUpdate.Changed, ownStatuses(r.StatusUpdate.Changed)...)
		for _, k := range r.StatusUpdate.Removed {
			if k.Kind == objects.KindHTTPProxy {
				res.StatusUpdate.Removed = append(res.StatusUpdate.Removed, k)
			}
		}
	}
	return first
}

// ownStatuses keeps the statuses a further gateway alone can give: those
// of the HTTPProxies it serves. The other objects (ExtensionServices,
// delegations) are read alike by every gateway, and the default gateway
// reports them.
func ownStatuses(in []*dag.Status) []*dag.Status {
	var out []*dag.Status
	for _, st := range in {
		if st.Key.Kind == objects.KindHTTPProxy {
			out = append(out, st)
		}
	}
	return out
}

// gatewayStatuses returns every further gateway's proxy statuses.
func (p *Pipeline) gatewayStatuses() []*dag.Status {
	var out []*dag.Status
	for _, gw := range p.gateways {
		out = append(out, ownStatuses(gw.Statuses())...)
	}
	return out
}

// Gateway returns the pipeline of a further gateway, nil if there is none.
func (p *Pipeline) Gateway(name string) *Pipeline {
	for _, gw := range p.gateways {
		if gw.cfg.DAG.IngressClassName == name {
			return gw
		}
	}
	return nil
}

// ServedBy returns the pipeline whose gateway serves an object: a further
// gateway's for an HTTPProxy of its class, else p. What the object
// produced, what the gate let through and the cache its nodes read are
// that pipeline's (Produced, Served, Cache).
func (p *Pipeline) ServedBy(k objects.Key) *Pipeline {
	if k.Kind != objects.KindHTTPProxy || len(p.gateways) == 0 {
		return p
	}
	if px := p.snap.HTTPProxies[k.NamespacedName()]; px != nil {
		if gw := p.Gateway(px.Spec.IngressClassName); gw != nil {
			return gw
		}
	}
	return p
}

// Cache returns the cache the pipeline feeds, nil when it feeds none.
func (p *Pipeline) Cache() *xdscache.Cache { return p.cache }

// OwnStatuses returns the statuses of what this pipeline's gateway read,
// with the gate's conditions: Statuses without the further gateways'
// proxies, so that a view of one gateway shows that gateway alone.
func (p *Pipeline) OwnStatuses() []*dag.Status {
	if !p.built {
		return nil
	}
	return PatchStatuses(p.engine.Statuses(), p.conds, p.warns)
}
