package incremental

import (
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// settleDNS decides again, for every DNS name whose claims changed, which
// claim owns it and which owners are warned, and updates the DNS group;
// the resources of new winners are made in parallel.
func (e *Engine) settleDNS() {
	var fresh []*dnsEntry
	for name := range e.claims.touched {
		e.mark(e.dirty.dns, name)
		for _, owner := range e.claims.warned[name] {
			e.statuses.warnDNS(owner, name, -1)
		}
		delete(e.claims.warned, name)
		list := e.claims.dns[name]
		prev := e.shared.dns[name]
		if len(list) == 0 {
			if prev != nil {
				e.dropDNS(name, prev)
			}
			continue
		}
		w := list[0]
		var warned []objects.Key
		for _, c := range list[1:] {
			if c.name.Cluster != w.name.Cluster && c.name.Cluster.Name != w.name.Cluster.Name {
				warned = append(warned, c.owner)
				e.statuses.warnDNS(c.owner, name, 1)
			}
		}
		if len(warned) > 0 {
			e.claims.warned[name] = warned
		}
		ce := e.shared.clusters[w.name.Cluster.Name]
		if prev != nil && prev.entry == ce {
			// The same cluster, so the same resources.
			prev.winner = w
			continue
		}
		if prev != nil {
			e.dropDNS(name, prev)
		}
		d := &dnsEntry{winner: w, entry: ce}
		ce.dns = append(ce.dns, d)
		e.shared.dns[name] = d
		fresh = append(fresh, d)
	}
	e.claims.touched = map[string]bool{} // not clear: a cleared large map still costs its size to range over
	out := make([][2]encoded, len(fresh))
	forEach(len(fresh), func(_, i int) {
		d := fresh[i]
		out[i][0] = e.encode(translator.DNSCluster(d.winner.name, e.cfg.Translator))
		if !translator.ServesEndpoints(&d.entry.cluster.Spec) {
			return // a CNAME: no load assignment, as translator.DNS
		}
		// The cluster's own load assignment, renamed. That of a cluster
		// made before this update may be behind the snapshot; if so,
		// refreshEndpoints, which comes next, makes this one again too.
		if cla := d.entry.cla; cla != nil {
			out[i][1] = renameAssignment(encoded{res: cla}, d.winner.name.Name)
			return
		}
		// None: it failed to encode, and is made again to report why.
		c := d.entry.cluster
		out[i][1] = encodeAssignment(d.winner.name.Name, translator.AssignmentOf(&c.Spec, e.snap, e.cfg.Translator))
	})
	for i, d := range fresh {
		name := d.winner.name.Name
		d.res, d.cla = e.keep(out[i][0]), e.keep(out[i][1])
		e.u.assignments++
		e.set(xdsres.GroupDNS, resource.ClusterType, name, d.res)
		e.set(xdsres.GroupDNS, resource.EndpointType, name, d.cla)
	}
}

func (e *Engine) dropDNS(name string, d *dnsEntry) {
	d.entry.dns = removeFirst(d.entry.dns, d)
	delete(e.shared.dns, name)
	e.set(xdsres.GroupDNS, resource.ClusterType, name, nil)
	e.set(xdsres.GroupDNS, resource.EndpointType, name, nil)
}

// dnsNames lists the DNS names served, for the DAG.
func (e *Engine) dnsNames() []dag.DNSName {
	var out []dag.DNSName
	for _, d := range e.shared.dns {
		out = append(out, d.winner.name)
	}
	return out
}
