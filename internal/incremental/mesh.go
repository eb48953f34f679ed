package incremental

import (
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// meshUnit is the mesh as one unit: dag.BuildMesh's result and, per mesh
// Service, its translation for the grpc and dns groups. The mesh is
// rebuilt whole when an object it reads changes (a Service, a Namespace,
// a TrafficSplit, an HTTPRouteGroup, a TrafficTarget, a Pod) and retranslated when the endpoints
// of one of its backends change: it reads no HTTPProxy, so roots never
// make it rebuild. Its cost is in proportion to the mesh, not to the
// ingress; finer units (one per mesh Service) are the next step if meshes
// grow large.
type meshUnit struct {
	res *dag.MeshResult
	// backends are the Services whose endpoints the mesh's load
	// assignments read.
	backends map[types.NamespacedName]bool
	// out is, per mesh Service, its resources per group.
	out map[string]map[xdsres.Group][]*xdsres.Resource
	// node is the node proxies' resources, made for the mesh as a whole:
	// a listener serves every Service with its port.
	node []*xdsres.Resource
	// served is what the mesh last put in the targets, per group, type
	// and name.
	served map[xdsres.Group]map[string]map[string]*xdsres.Resource
	// statuses are res.Statuses by key.
	statuses map[objects.Key]*dag.Status
}

// meshKinds are the kinds whose change rebuilds the mesh.
var meshKinds = map[objects.Kind]bool{
	objects.KindService: true, objects.KindNamespace: true,
	objects.KindTrafficSplit: true, objects.KindHTTPRouteGroup: true,
	objects.KindTrafficTarget: true, objects.KindPod: true,
}

// updateMesh rebuilds or retranslates the mesh where the update needs it,
// then publishes the resources of every mesh Service whose name the
// ingress does not already serve in that group, as the full translation
// does (translator.GRPC and translator.DNS). It runs after the roots are
// settled, since which names they serve decides that.
func (e *Engine) updateMesh(ch Changes) {
	if !e.cfg.DAG.Mesh {
		return
	}
	m := &e.mesh
	rebuild := m.res == nil
	for k := range e.u.changed {
		rebuild = rebuild || meshKinds[k.Kind]
	}
	retranslate := rebuild || ch.AllEndpoints
	for svc := range ch.Endpoints {
		retranslate = retranslate || m.backends[svc]
	}
	d := e.view()
	if rebuild {
		old := m.statuses
		m.res = dag.BuildMesh(e.snap)
		m.statuses = make(map[objects.Key]*dag.Status, len(m.res.Statuses))
		for _, st := range m.res.Statuses {
			m.statuses[st.Key] = st
		}
		e.meshStatuses(old)
		// The view holds the mesh as Build does; the next patch keeps it.
		next := *d
		next.Mesh = m.res.Services
		e.dag, d = &next, &next
	}
	if retranslate {
		m.translate(e)
	}
	e.publishMesh(d)
}

// translate makes every mesh Service's resources.
func (m *meshUnit) translate(e *Engine) {
	m.backends = map[types.NamespacedName]bool{}
	m.out = make(map[string]map[xdsres.Group][]*xdsres.Resource, len(m.res.Services))
	for _, ms := range m.res.Services {
		for _, p := range ms.Ports {
			for _, b := range p.Cluster.Spec.Backends {
				m.backends[b.Service] = true
			}
			for _, r := range p.Routes {
				for _, b := range r.Cluster.Spec.Backends {
					m.backends[b.Service] = true
				}
			}
		}
		byGroup := map[xdsres.Group][]*xdsres.Resource{}
		for g, tr := range map[xdsres.Group]*translator.Resources{
			xdsres.GroupGRPC: translator.MeshGRPC(ms, e.snap, e.cfg.Translator),
			xdsres.GroupDNS:  translator.MeshDNS(ms, e.snap, e.cfg.Translator),
		} {
			for _, msg := range tr.All() {
				if r := e.keep(encode(msg)); r != nil {
					byGroup[g] = append(byGroup[g], r)
				}
			}
		}
		m.out[ms.Name] = byGroup
	}
	m.node = nil
	for _, msg := range translator.MeshNode(&dag.DAG{Mesh: m.res.Services}, e.snap, e.cfg.Translator).All() {
		if r := e.keep(encode(msg)); r != nil {
			m.node = append(m.node, r)
		}
	}
}

// publishMesh sets the targets to the mesh's resources, for the names the
// ingress leaves free, and deletes those the mesh no longer serves.
func (e *Engine) publishMesh(d *dag.DAG) {
	m := &e.mesh
	next := map[xdsres.Group]map[string]map[string]*xdsres.Resource{}
	put := func(g xdsres.Group, r *xdsres.Resource) {
		t := r.Any.TypeUrl
		if next[g] == nil {
			next[g] = map[string]map[string]*xdsres.Resource{}
		}
		if next[g][t] == nil {
			next[g][t] = map[string]*xdsres.Resource{}
		}
		next[g][t][r.Name] = r
	}
	for _, r := range m.node {
		put(xdsres.GroupMesh, r)
	}
	for name, byGroup := range m.out {
		for g, rs := range byGroup {
			if meshNameTaken(d, g, name) {
				continue
			}
			for _, r := range rs {
				put(g, r)
			}
		}
	}
	for g, byType := range m.served {
		for t, byName := range byType {
			for name := range byName {
				// A resource the ingress wrote over in this update (it took
				// the name) is the ingress's now: forgotten, not deleted.
				_, written := e.u.before[g][t][name]
				if next[g][t][name] == nil && !written {
					e.set(g, t, name, nil)
				}
			}
		}
	}
	for g, byType := range next {
		for t, byName := range byType {
			for name, r := range byName {
				if old := m.served[g][t][name]; old == nil || old.Version != r.Version {
					e.set(g, t, name, r)
				}
			}
		}
	}
	m.served = next
}

// meshNameTaken reports whether the ingress serves a mesh Service's name
// in a group: a virtual host of that name for gRPC, a DNS name for DNS.
func meshNameTaken(d *dag.DAG, g xdsres.Group, name string) bool {
	switch g {
	case xdsres.GroupGRPC:
		i := sort.Search(len(d.VirtualHosts), func(i int) bool { return d.VirtualHosts[i].FQDN >= name })
		j := sort.Search(len(d.SecureVirtualHosts), func(i int) bool { return d.SecureVirtualHosts[i].FQDN >= name })
		return (i < len(d.VirtualHosts) && d.VirtualHosts[i].FQDN == name) ||
			(j < len(d.SecureVirtualHosts) && d.SecureVirtualHosts[j].FQDN == name)
	case xdsres.GroupDNS:
		i := sort.Search(len(d.DNSNames), func(i int) bool { return d.DNSNames[i].Name >= name })
		return i < len(d.DNSNames) && d.DNSNames[i].Name == name
	}
	return false
}

// meshStatuses puts the TrafficSplits' statuses in the status table,
// marking those that changed as recomputed. It runs after the table's own
// recompute, and TrafficSplit keys sort after every other kind, so the
// recomputed keys stay sorted.
func (e *Engine) meshStatuses(old map[objects.Key]*dag.Status) {
	t := &e.statuses
	keys := make([]objects.Key, 0, len(old)+len(e.mesh.statuses))
	for k, st := range e.mesh.statuses {
		if prev := old[k]; prev == nil || !reflect.DeepEqual(prev, st) {
			t.current[k] = st
			keys = append(keys, k)
		}
	}
	for k := range old {
		if e.mesh.statuses[k] == nil {
			delete(t.current, k)
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	if len(keys) > 0 && t.unlisted == nil {
		t.unlisted = map[objects.Key]bool{}
	}
	for _, k := range keys {
		t.unlisted[k] = true
	}
	t.recomputed = append(t.recomputed, keys...)
}
