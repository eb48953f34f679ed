package incremental

import (
	"cmp"
	"sort"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// dagDirty names what changed in the DAG since it was last materialized:
// host names, clusters, secrets and DNS names.
type dagDirty struct {
	hosts, clusters, secrets, dns map[string]bool
}

// mark records that name changed in the DAG. Before a DAG is first
// materialized there is nothing to patch (view builds it whole, and
// forgets what was marked), so nothing is recorded: the first build would
// otherwise list every host name and cluster twice, and keep them until
// someone asks for the DAG.
func (e *Engine) mark(m map[string]bool, name string) {
	if e.dag != nil {
		m[name] = true
	}
}

func newDAGDirty() dagDirty {
	return dagDirty{hosts: map[string]bool{}, clusters: map[string]bool{}, secrets: map[string]bool{}, dns: map[string]bool{}}
}

// view returns the DAG as Assemble would, materializing it the first time
// and afterwards patching the last one where it changed: the server asks
// for it after every batch, and sorting tens of thousands of hosts and
// clusters each time would cost more than the change. Every DAG returned
// is new; none is modified afterwards.
func (e *Engine) view() *dag.DAG {
	if e.dag == nil {
		e.dag = e.materialize()
		e.dirty = newDAGDirty()
		return e.dag
	}
	if len(e.dirty.hosts)+len(e.dirty.clusters)+len(e.dirty.secrets)+len(e.dirty.dns) == 0 {
		return e.dag
	}
	old, d := e.dag, &dag.DAG{}
	hosts := sortedKeys(e.dirty.hosts)
	d.VirtualHosts = orNil(patchSorted(old.VirtualHosts, hosts, func(v *dag.VirtualHost) string { return v.FQDN }, cmp.Less[string],
		func(fqdn string) (*dag.VirtualHost, bool) {
			res := e.hostOwner(fqdn)
			return res.GetInsecure(), res.GetInsecure() != nil
		}))
	d.SecureVirtualHosts = orNil(patchSorted(old.SecureVirtualHosts, hosts, func(v *dag.SecureVirtualHost) string { return v.FQDN }, cmp.Less[string],
		func(fqdn string) (*dag.SecureVirtualHost, bool) {
			res := e.hostOwner(fqdn)
			return res.GetSecure(), res.GetSecure() != nil
		}))
	d.Clusters = patchSorted(old.Clusters, sortedKeys(e.dirty.clusters), func(c *dag.Cluster) string { return c.Name }, cmp.Less[string],
		func(name string) (*dag.Cluster, bool) {
			if ce := e.shared.clusters[name]; ce != nil {
				return ce.cluster, true
			}
			return nil, false
		})
	d.Secrets = patchSorted(old.Secrets, sortedKeys(e.dirty.secrets), func(s *dag.Secret) string { return s.Name }, cmp.Less[string],
		func(name string) (*dag.Secret, bool) {
			if se := e.shared.secrets[name]; se != nil {
				return se.secret, true
			}
			return nil, false
		})
	d.DNSNames = orNil(patchSorted(old.DNSNames, sortedKeys(e.dirty.dns), func(n dag.DNSName) string { return n.Name }, cmp.Less[string],
		func(name string) (dag.DNSName, bool) {
			if de := e.shared.dns[name]; de != nil {
				return de.winner.name, true
			}
			return dag.DNSName{}, false
		}))
	d.Mesh = old.Mesh
	e.dag, e.dirty = d, newDAGDirty()
	return d
}

// hostOwner returns the result of the root that serves a host name, nil
// when none does.
func (e *Engine) hostOwner(fqdn string) hostResult {
	list := e.claims.fqdn[fqdn]
	if len(list) == 0 || list[0].added == nil || !list[0].added.winner {
		return hostResult{}
	}
	return hostResult{list[0].added.res}
}

type hostResult struct{ res *dag.RootResult }

func (h hostResult) GetInsecure() *dag.VirtualHost {
	if h.res == nil {
		return nil
	}
	return h.res.Insecure
}

func (h hostResult) GetSecure() *dag.SecureVirtualHost {
	if h.res == nil {
		return nil
	}
	return h.res.Secure
}

// patchSorted returns a new slice: old (sorted by keyOf, in the order of
// less) with the elements of keys (sorted the same way) replaced, added or
// removed as lookup says, copying the runs in between. It is never nil.
// It spares re-sorting a long list of which a few elements changed.
func patchSorted[T any, K comparable](old []T, keys []K, keyOf func(T) K, less func(a, b K) bool, lookup func(K) (T, bool)) []T {
	out := make([]T, 0, len(old)+len(keys))
	pos := 0
	for _, k := range keys {
		i := pos + sort.Search(len(old)-pos, func(i int) bool { return !less(keyOf(old[pos+i]), k) })
		out = append(out, old[pos:i]...)
		pos = i
		if pos < len(old) && keyOf(old[pos]) == k {
			pos++
		}
		if v, ok := lookup(k); ok {
			out = append(out, v)
		}
	}
	return append(out, old[pos:]...)
}

// orNil is nil for an empty slice, as Assemble leaves the lists it appends
// to.
func orNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// materialize puts the DAG together from the units, as Assemble would.
func (e *Engine) materialize() *dag.DAG {
	d := &dag.DAG{}
	for _, r := range e.roots {
		if r.added == nil || !r.added.winner {
			continue
		}
		if vh := r.added.res.Insecure; vh != nil {
			d.VirtualHosts = append(d.VirtualHosts, vh)
		}
		if svh := r.added.res.Secure; svh != nil {
			d.SecureVirtualHosts = append(d.SecureVirtualHosts, svh)
		}
	}
	sort.Slice(d.VirtualHosts, func(i, j int) bool { return d.VirtualHosts[i].FQDN < d.VirtualHosts[j].FQDN })
	sort.Slice(d.SecureVirtualHosts, func(i, j int) bool { return d.SecureVirtualHosts[i].FQDN < d.SecureVirtualHosts[j].FQDN })
	d.Clusters = make([]*dag.Cluster, 0, len(e.shared.clusters))
	for _, ce := range e.shared.clusters {
		d.Clusters = append(d.Clusters, ce.cluster)
	}
	sort.Slice(d.Clusters, func(i, j int) bool { return d.Clusters[i].Name < d.Clusters[j].Name })
	d.Secrets = make([]*dag.Secret, 0, len(e.shared.secrets))
	for _, se := range e.shared.secrets {
		d.Secrets = append(d.Secrets, se.secret)
	}
	sort.Slice(d.Secrets, func(i, j int) bool { return d.Secrets[i].Name < d.Secrets[j].Name })
	d.DNSNames = e.dnsNames()
	sort.Slice(d.DNSNames, func(i, j int) bool { return d.DNSNames[i].Name < d.DNSNames[j].Name })
	if e.mesh.res != nil {
		d.Mesh = e.mesh.res.Services
	}
	return d
}
