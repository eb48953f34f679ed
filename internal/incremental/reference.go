package incremental

import (
	"sort"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// serviceKind is the kind whose changes reach load assignments directly.
const serviceKind = objects.KindService

// ReferenceResult is a full build: what an Engine must equal.
type ReferenceResult struct {
	DAG      *dag.DAG
	Statuses []*dag.Status
	Targets  map[xdscache.Group]Targets
}

// Reference builds everything from scratch the straightforward way:
// dag.Build, then translator.Envoy, GRPC and DNS, each resource encoded.
// It is what the engine's output is tested against, and what a degraded
// engine serves. A resource that fails to encode is left out.
func Reference(snap *objects.Snapshot, dagOpts dag.Options, trOpts translator.Options) *ReferenceResult {
	res := dag.Build(snap, dagOpts)
	out := &ReferenceResult{DAG: res.DAG, Statuses: res.Statuses, Targets: map[xdscache.Group]Targets{}}
	translations := map[xdscache.Group]*translator.Resources{
		xdscache.GroupEnvoy: translator.Envoy(res.DAG, snap, trOpts),
		xdscache.GroupGRPC:  translator.GRPC(res.DAG, snap, trOpts),
		xdscache.GroupDNS:   translator.DNS(res.DAG, snap, trOpts),
	}
	for g, tr := range translations {
		t := Targets{}
		for _, typ := range xdscache.TypesOf(g) {
			t[typ] = map[string]*xdscache.Resource{}
		}
		for url, msgs := range render.ByType(tr) {
			for _, m := range msgs {
				if r, err := xdscache.NewResource(m); err == nil && t[url] != nil {
					t[url][r.Name] = r
				}
			}
		}
		out.Targets[g] = t
	}
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
	return d
}
