package incremental

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// sharedTables hold the resources several units may use, counted by their
// users: clusters with their load assignments, secrets, and the DNS names
// with the cluster behind each.
type sharedTables struct {
	clusters  map[string]*clusterEntry
	secrets   map[string]*secretEntry
	byService serviceIndex
	dns       map[string]*dnsEntry
}

func newSharedTables() sharedTables {
	return sharedTables{
		clusters:  map[string]*clusterEntry{},
		secrets:   map[string]*secretEntry{},
		byService: newServiceIndex(0),
		dns:       map[string]*dnsEntry{},
	}
}

// clusterEntry is one cluster name: its Envoy cluster and load assignment,
// and, while some host serves it to gRPC clients, the gRPC ones (often
// the very same resources). A name is a hash of the spec, so the resources
// never change while the entry lives, except the load assignments, which
// follow the endpoints of services.
type clusterEntry struct {
	cluster  *dag.Cluster
	services []types.NamespacedName
	refs     int
	grpcRefs int
	res      *xdsres.Resource
	cla      *xdsres.Resource
	grpcRes  *xdsres.Resource
	grpcCLA  *xdsres.Resource
	// dns are the DNS names served from this cluster, each under its
	// winner's name: a list, as a cluster serves one or two names at most
	// and a map of one entry costs hundreds of bytes.
	dns []*dnsEntry
	// generation is the update that last computed the load assignments.
	generation uint64
	// fresh is set for an entry made in this update, grpcFresh when a
	// gRPC host started using it; queued when either is on e.u.pending.
	fresh, grpcFresh, queued bool
}

type secretEntry struct {
	secret *dag.Secret
	refs   int
	res    *xdsres.Resource
}

// dnsEntry is the DNS group's cluster and load assignment of a DNS name.
type dnsEntry struct {
	winner *dnsClaim
	entry  *clusterEntry
	res    *xdsres.Resource
	cla    *xdsres.Resource
}

// refCluster counts one more user of a cluster. A new cluster's resources
// are made after every unit has been added (computePending), all at once
// and in parallel.
func (e *Engine) refCluster(c *dag.Cluster) {
	ce := e.shared.clusters[c.Name]
	if ce != nil && ce.refs == 0 && ce.cluster != c && !reflect.DeepEqual(ce.cluster.Spec, c.Spec) {
		// Released in this update, and another spec hashes to its name:
		// not a clash, since nothing uses the old one.
		e.releaseGRPC(ce)
		e.deleteCluster(ce)
		ce = nil
	}
	if ce == nil {
		ce = &clusterEntry{cluster: c, fresh: true}
		// A DNS-resolved cluster (an ExternalName Service) has no load
		// assignment to follow endpoints with, as translator.Envoy.
		backends := followedBackends(c)
		ce.services = make([]types.NamespacedName, 0, len(backends))
		for _, b := range backends {
			if !slices.Contains(ce.services, b.Service) {
				ce.services = append(ce.services, b.Service)
			}
		}
		for _, svc := range ce.services {
			e.shared.byService.add(svc, ce)
		}
		e.shared.clusters[c.Name] = ce
		e.mark(e.dirty.clusters, c.Name)
		e.queue(ce)
	} else if ce.cluster != c {
		if !reflect.DeepEqual(ce.cluster.Spec, c.Spec) {
			e.degraded = true
		}
		if ce.refs == 0 {
			// Reused by the root that released it: hold its new result's
			// cluster, not the old one's.
			ce.cluster = c
			e.mark(e.dirty.clusters, c.Name)
		}
	}
	ce.refs++
}

func (e *Engine) queue(ce *clusterEntry) {
	if !ce.queued {
		ce.queued = true
		e.u.pending = append(e.u.pending, ce)
	}
}

func (e *Engine) unrefCluster(c *dag.Cluster) {
	ce := e.shared.clusters[c.Name]
	if ce.refs--; ce.refs == 0 {
		e.u.unusedClusters = append(e.u.unusedClusters, ce)
	}
}

// releaseUnused deletes the clusters and secrets no unit uses any more.
func (e *Engine) releaseUnused() {
	for _, ce := range e.u.unusedGRPC {
		if ce.grpcRefs == 0 {
			e.releaseGRPC(ce)
		}
	}
	for _, ce := range e.u.unusedClusters {
		if ce.refs == 0 && e.shared.clusters[ce.cluster.Name] == ce {
			e.deleteCluster(ce)
		}
	}
	for _, se := range e.u.unusedSecrets {
		if se.refs == 0 && e.shared.secrets[se.secret.Name] == se {
			delete(e.shared.secrets, se.secret.Name)
			e.mark(e.dirty.secrets, se.secret.Name)
			e.set(xdsres.GroupEnvoy, resource.SecretType, se.secret.Name, nil)
		}
	}
	e.u.unusedGRPC, e.u.unusedClusters, e.u.unusedSecrets = nil, nil, nil
}

func (e *Engine) deleteCluster(ce *clusterEntry) {
	c := ce.cluster
	delete(e.shared.clusters, c.Name)
	e.mark(e.dirty.clusters, c.Name)
	for _, svc := range ce.services {
		e.shared.byService.remove(svc, ce)
	}
	e.set(xdsres.GroupEnvoy, resource.ClusterType, c.Name, nil)
	e.set(xdsres.GroupEnvoy, resource.EndpointType, c.Name, nil)
}

// refGRPCCluster counts one more gRPC host using a cluster its root
// already references.
func (e *Engine) refGRPCCluster(c *dag.Cluster) {
	ce := e.shared.clusters[c.Name]
	if ce.grpcRefs++; ce.grpcRefs == 1 && ce.grpcRes == nil {
		ce.grpcFresh = true
		e.queue(ce)
	}
}

func (e *Engine) unrefGRPCCluster(c *dag.Cluster) {
	ce := e.shared.clusters[c.Name]
	if ce.grpcRefs--; ce.grpcRefs == 0 {
		e.u.unusedGRPC = append(e.u.unusedGRPC, ce)
	}
}

// releaseGRPC drops a cluster's gRPC resources.
func (e *Engine) releaseGRPC(ce *clusterEntry) {
	if ce.grpcRes == nil && ce.grpcCLA == nil {
		return
	}
	ce.grpcRes, ce.grpcCLA, ce.grpcFresh = nil, nil, false
	e.set(xdsres.GroupGRPC, resource.ClusterType, ce.cluster.Name, nil)
	e.set(xdsres.GroupGRPC, resource.EndpointType, ce.cluster.Name, nil)
}

// assignments are a cluster's resources as a parallel phase computes them.
type assignments struct {
	cluster          *envoy_config_cluster_v3.Cluster
	res, cla         encoded
	grpcRes, grpcCLA encoded
	dns              []encoded
	n                int
}

// computePending makes the resources of the clusters added in this update
// (and the gRPC ones of clusters a gRPC host started to use), in parallel.
func (e *Engine) computePending() {
	var list []*clusterEntry
	for _, ce := range e.u.pending {
		ce.queued = false
		if e.shared.clusters[ce.cluster.Name] == ce {
			list = append(list, ce)
		}
	}
	out := make([]assignments, len(list))
	bufs := assignmentBuffers(len(list))
	forEach(len(list), func(w, i int) {
		ce, a := list[i], &out[i]
		var asg *translator.Assignment
		if ce.fresh {
			a.cluster = translator.Cluster(ce.cluster, e.cfg.Translator)
			a.res = e.encode(a.cluster)
			asg = e.loadAssignment(ce, a, &bufs[w])
		}
		if ce.grpcRefs > 0 && (ce.fresh || ce.grpcFresh) {
			res, cla := a.res, a.cla
			if !ce.fresh {
				// An existing cluster: its message and assignment are not
				// kept, and are made again.
				a.cluster = translator.Cluster(ce.cluster, e.cfg.Translator)
				res, cla = encoded{res: ce.res}, encoded{res: ce.cla}
				if translator.ServesEndpoints(&ce.cluster.Spec) {
					asg = bufs[w].Of(&ce.cluster.Spec, e.snap, e.cfg.Translator)
				}
			}
			a.grpcRes = e.grpcCluster(ce, a.cluster, res)
			a.grpcCLA = e.grpcAssignment(ce, asg, cla, a)
		}
	})
	for i, ce := range list {
		a := &out[i]
		name := ce.cluster.Name
		if ce.fresh {
			ce.res, ce.cla = e.keep(a.res), e.keep(a.cla)
			ce.generation = e.u.generation
			e.set(xdsres.GroupEnvoy, resource.ClusterType, name, ce.res)
			e.set(xdsres.GroupEnvoy, resource.EndpointType, name, ce.cla)
		}
		if ce.grpcRefs > 0 && (ce.fresh || ce.grpcFresh) {
			ce.grpcRes, ce.grpcCLA = e.keep(a.grpcRes), e.keep(a.grpcCLA)
			e.set(xdsres.GroupGRPC, resource.ClusterType, name, ce.grpcRes)
			e.set(xdsres.GroupGRPC, resource.EndpointType, name, ce.grpcCLA)
		}
		e.u.assignments += a.n
		ce.fresh, ce.grpcFresh = false, false
	}
	e.u.pending = nil
}

// assignmentBuffers are the buffers of a parallel phase over n clusters,
// one per worker; none when there is nothing to compute (most updates
// after the first, which change one object).
func assignmentBuffers(n int) []translator.AssignmentBuffers {
	if n == 0 {
		return nil
	}
	return make([]translator.AssignmentBuffers, workers())
}

// loadAssignment computes a cluster's Envoy load assignment into a, and
// returns it for the gRPC group's, made in buf: valid until buf's next
// use.
func (e *Engine) loadAssignment(ce *clusterEntry, a *assignments, buf *translator.AssignmentBuffers) *translator.Assignment {
	if !translator.ServesEndpoints(&ce.cluster.Spec) {
		return nil
	}
	asg := buf.Of(&ce.cluster.Spec, e.snap, e.cfg.Translator)
	a.cla = encodeAssignment(ce.cluster.Name, asg)
	a.n++
	return asg
}

// encodeAssignment makes the compact resource of a load assignment,
// encoded straight from its data: no message is built.
func encodeAssignment(name string, asg *translator.Assignment) encoded {
	b, err := asg.Encode(name)
	if err != nil {
		return encoded{err: fmt.Errorf("encoding the load assignment of %q: %w", name, err)}
	}
	return encoded{res: xdsres.NewCompactResource(name, resource.EndpointType, b)}
}

// renameAssignment is the load assignment encoded in enc, served under
// another name (a DNS name's, whose cluster it is): nothing when enc is
// nothing (its error is reported with it).
func renameAssignment(enc encoded, name string) encoded {
	if enc.res == nil {
		return encoded{}
	}
	b, err := translator.RenameLoadAssignment(enc.res.Any.Value, name)
	if err != nil {
		return encoded{err: fmt.Errorf("encoding the load assignment of %q: %w", name, err)}
	}
	return encoded{res: xdsres.NewCompactResource(name, resource.EndpointType, b)}
}

// grpcCluster is the gRPC group's cluster: Envoy's own resource (res,
// encoded from m) when the shaping changes nothing.
func (e *Engine) grpcCluster(ce *clusterEntry, m *envoy_config_cluster_v3.Cluster, res encoded) encoded {
	if g := translator.GRPCClusterOf(m, ce.cluster, e.cfg.Translator); g != m {
		return e.encode(g)
	}
	return res
}

// grpcAssignment is the gRPC group's load assignment: Envoy's own (cla)
// when it holds no duplicate.
func (e *Engine) grpcAssignment(ce *clusterEntry, asg *translator.Assignment, cla encoded, a *assignments) encoded {
	a.n++
	if asg == nil {
		return encoded{}
	}
	if g := asg.GRPC(); g != asg {
		return encodeAssignment(ce.cluster.Name, g)
	}
	return cla
}

// refreshEndpoints recomputes, in parallel, the load assignments of the
// clusters whose Services' endpoints (or the Services themselves) changed,
// in every group that serves them.
func (e *Engine) refreshEndpoints(ch Changes) {
	if e.u.initial {
		// Every cluster was made in this update, from the endpoints as
		// they are: there is nothing to refresh, and looking up every
		// Service of the snapshot to find that out is most of the cost.
		return
	}
	var list []*clusterEntry
	seen := map[*clusterEntry]bool{}
	add := func(ce *clusterEntry) {
		if ce.generation != e.u.generation && !seen[ce] && translator.ServesEndpoints(&ce.cluster.Spec) {
			seen[ce] = true
			list = append(list, ce)
		}
	}
	if ch.AllEndpoints {
		for _, ce := range e.shared.clusters {
			add(ce)
		}
	}
	for svc := range ch.Endpoints {
		e.shared.byService.each(svc, add)
	}
	for k := range e.u.changed {
		if k.Kind == objects.KindService {
			e.shared.byService.each(k.NamespacedName(), add)
		}
	}
	dnsNames := make([][]*dnsEntry, len(list))
	for i, ce := range list {
		dnsNames[i] = ce.dns
	}
	out := make([]assignments, len(list))
	bufs := assignmentBuffers(len(list))
	forEach(len(list), func(w, i int) {
		ce, a := list[i], &out[i]
		asg := e.loadAssignment(ce, a, &bufs[w])
		if ce.grpcRefs > 0 {
			a.grpcCLA = e.grpcAssignment(ce, asg, a.cla, a)
		}
		for _, d := range dnsNames[i] {
			a.dns = append(a.dns, renameAssignment(a.cla, d.winner.name.Name))
			a.n++
		}
	})
	for i, ce := range list {
		a := &out[i]
		name := ce.cluster.Name
		ce.cla, ce.generation = e.keep(a.cla), e.u.generation
		e.set(xdsres.GroupEnvoy, resource.EndpointType, name, ce.cla)
		if ce.grpcRefs > 0 {
			ce.grpcCLA = e.keep(a.grpcCLA)
			e.set(xdsres.GroupGRPC, resource.EndpointType, name, ce.grpcCLA)
		}
		for j, d := range dnsNames[i] {
			d.cla = e.keep(a.dns[j])
			e.set(xdsres.GroupDNS, resource.EndpointType, d.winner.name.Name, d.cla)
		}
		e.u.assignments += a.n
	}
}

func (e *Engine) refSecret(s *dag.Secret) {
	se := e.shared.secrets[s.Name]
	switch {
	case se == nil:
		se = &secretEntry{secret: s, res: e.keep(encode(translator.Secret(s)))}
		e.shared.secrets[s.Name] = se
		e.mark(e.dirty.secrets, s.Name)
		e.set(xdsres.GroupEnvoy, resource.SecretType, s.Name, se.res)
	case se.secret != s && !sameSecret(se.secret, s):
		// Every user of a changed Secret is rebuilt in the same update;
		// the last one added holds the new content, as in Assemble.
		se.secret, se.res = s, e.keep(encode(translator.Secret(s)))
		e.mark(e.dirty.secrets, s.Name)
		e.set(xdsres.GroupEnvoy, resource.SecretType, s.Name, se.res)
	}
	se.refs++
}

func (e *Engine) unrefSecret(s *dag.Secret) {
	se := e.shared.secrets[s.Name]
	if se.refs--; se.refs == 0 {
		e.u.unusedSecrets = append(e.u.unusedSecrets, se)
	}
}

// followedBackends is the backends of c whose endpoints its load assignment
// follows: none for a cluster resolved by DNS.
func followedBackends(c *dag.Cluster) []dag.Backend {
	if !translator.ServesEndpoints(&c.Spec) {
		return nil
	}
	return c.Spec.Backends
}

func sameSecret(a, b *dag.Secret) bool {
	return a.Kind == b.Kind && a.Source == b.Source && bytes.Equal(a.Cert, b.Cert) && bytes.Equal(a.Key, b.Key)
}
