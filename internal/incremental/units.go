package incremental

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// rootUnit is one root proxy: its last result and what that result
// contributes to the build.
type rootUnit struct {
	nn types.NamespacedName
	// res is nil once the proxy is no longer a served root.
	res *dag.RootResult
	// claim is the host name the unit is listed under in claims.fqdn.
	claim   string
	claimed bool
	// added is what the unit has contributed, nil when nothing.
	added *contribution
	// out is the translation of res, kept for as long as res is.
	out *rootOutput
	// statuses are res.Statuses as a list (res's map is dropped): a
	// root's statuses are a map of one or two entries, and a map costs
	// hundreds of bytes however few it holds.
	statuses []*dag.Status
}

// extUnit names an ExtensionService as a reader of keys and as the source
// of a status.
type extUnit types.NamespacedName

// rebuildExtensions rebuilds the ExtensionServices that changed or read a
// changed object, and returns their previous results (nil for new ones).
// Each rebuilt one counts as changed for the roots that use it.
func (e *Engine) rebuildExtensions() map[types.NamespacedName]*dag.ExtensionResult {
	dirty := map[types.NamespacedName]bool{}
	for k := range e.u.changed {
		if k.Kind == objects.KindExtensionService {
			dirty[k.NamespacedName()] = true
		}
		e.extDeps.each(k, func(u unit) { dirty[types.NamespacedName(u.(extUnit))] = true })
	}
	old := make(map[types.NamespacedName]*dag.ExtensionResult, len(dirty))
	for nn := range dirty {
		prev := e.exts[nn]
		old[nn] = prev
		if prev != nil {
			e.extDeps.remove(extUnit(nn), prev.Deps)
		}
		if obj := e.snap.ExtensionServices[nn]; obj != nil {
			r := dag.BuildExtension(e.snap, obj)
			e.exts[nn] = r
			e.extDeps.add(extUnit(nn), r.Deps)
		} else {
			delete(e.exts, nn)
		}
		e.u.changed[objects.NewKey(objects.KindExtensionService, nn)] = true
	}
	return old
}

// rebuildRoots rebuilds the roots that changed, appeared, stopped being
// roots or read a changed object (an ExtensionService rebuilt above
// included), and returns them; indexRoots then indexes what they read.
func (e *Engine) rebuildRoots() []*rootUnit {
	dirty := map[types.NamespacedName]bool{}
	for k := range e.u.changed {
		if k.Kind == objects.KindHTTPProxy {
			nn := k.NamespacedName()
			if p := e.snap.HTTPProxies[nn]; (p != nil && dag.IsRoot(p, e.cfg.DAG)) || e.roots[nn] != nil {
				dirty[nn] = true
			}
		}
		e.rootDeps.each(k, func(u unit) { dirty[u.(*rootUnit).nn] = true })
	}
	out := make([]*rootUnit, 0, len(dirty))
	for nn := range dirty {
		r := e.roots[nn]
		if r == nil {
			r = &rootUnit{nn: nn}
			e.roots[nn] = r
		}
		if r.res != nil {
			e.rootDeps.remove(r, r.res.Deps)
		}
		r.res, r.statuses = nil, nil
		out = append(out, r)
	}
	// Each root is built, and translated, from the snapshot alone: in
	// parallel, each worker with its own certificate checks.
	forEach(len(out), func(w, i int) {
		r := out[i]
		if p := e.snap.HTTPProxies[r.nn]; p != nil && dag.IsRoot(p, e.cfg.DAG) {
			opts := e.cfg.DAG
			opts.KeyPairs = e.keyPairs[w]
			r.res = dag.BuildRoot(e.snap, opts, p, e.exts)
			r.statuses = statusList(r.res)
			r.out = translateRoot(r.res, e.cfg.Translator, e.inspect())
		}
	})
	return out
}

// indexRoots adds what the rebuilt roots read to the index (rebuildRoots
// took out what they read before).
func (e *Engine) indexRoots(rebuilt []*rootUnit) {
	for _, r := range rebuilt {
		if r.res != nil {
			e.rootDeps.add(r, r.res.Deps)
		}
	}
}

// statusList takes a root result's statuses out of its map: each status
// holds its own key.
func statusList(res *dag.RootResult) []*dag.Status {
	out := make([]*dag.Status, 0, len(res.Statuses))
	for _, st := range res.Statuses {
		out = append(out, st)
	}
	res.Statuses = nil
	return out
}
