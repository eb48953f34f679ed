package incremental

import (
	"bytes"
	"reflect"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// sharedTables hold the resources several units may use, counted by their
// users: clusters with their load assignments, secrets, and the DNS names
// with the cluster behind each.
type sharedTables struct {
	clusters  map[string]*clusterEntry
	secrets   map[string]*secretEntry
	byService map[types.NamespacedName][]*clusterEntry
	dns       map[string]*dnsEntry
}

func newSharedTables() sharedTables {
	return sharedTables{
		clusters:  map[string]*clusterEntry{},
		secrets:   map[string]*secretEntry{},
		byService: map[types.NamespacedName][]*clusterEntry{},
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
	res      *xdscache.Resource
	cla      *xdscache.Resource
	claMsg   *envoy_config_endpoint_v3.ClusterLoadAssignment
	grpcRes  *xdscache.Resource
	grpcCLA  *xdscache.Resource
	// dns are the DNS names served from this cluster.
	dns map[string]*dnsEntry
	// generation is the update that last computed the load assignments.
	generation uint64
}

type secretEntry struct {
	secret *dag.Secret
	refs   int
	res    *xdscache.Resource
}

// dnsEntry is the DNS group's cluster and load assignment of a DNS name.
type dnsEntry struct {
	winner *dnsClaim
	entry  *clusterEntry
	res    *xdscache.Resource
	cla    *xdscache.Resource
}

// encode makes a cache resource, or returns nil (leaving the resource out)
// and records the error for Update to return.
func (e *Engine) encode(m proto.Message) *xdscache.Resource {
	r, err := xdscache.NewResource(m)
	if err != nil {
		if e.u.err == nil {
			e.u.err = err
		}
		return nil
	}
	return r
}

// refCluster counts one more user of a cluster, making its resources for
// the first one.
func (e *Engine) refCluster(c *dag.Cluster) {
	ce := e.shared.clusters[c.Name]
	if ce == nil {
		ce = &clusterEntry{cluster: c}
		for _, b := range c.Spec.Backends {
			if !containsService(ce.services, b.Service) {
				ce.services = append(ce.services, b.Service)
			}
		}
		for _, svc := range ce.services {
			e.shared.byService[svc] = append(e.shared.byService[svc], ce)
		}
		e.shared.clusters[c.Name] = ce
		ce.res = e.encode(translator.Cluster(c, e.cfg.Translator))
		e.set(xdscache.GroupEnvoy, resource.ClusterType, c.Name, ce.res)
		e.computeAssignments(ce)
	} else if ce.cluster != c && !reflect.DeepEqual(ce.cluster.Spec, c.Spec) {
		e.degraded = true
	}
	ce.refs++
}

func (e *Engine) unrefCluster(c *dag.Cluster) {
	ce := e.shared.clusters[c.Name]
	if ce.refs--; ce.refs > 0 {
		return
	}
	delete(e.shared.clusters, c.Name)
	for _, svc := range ce.services {
		list := e.shared.byService[svc]
		for i, x := range list {
			if x == ce {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(e.shared.byService, svc)
		} else {
			e.shared.byService[svc] = list
		}
	}
	e.set(xdscache.GroupEnvoy, resource.ClusterType, c.Name, nil)
	e.set(xdscache.GroupEnvoy, resource.EndpointType, c.Name, nil)
}

// refGRPCCluster counts one more gRPC host using a cluster its root
// already references.
func (e *Engine) refGRPCCluster(c *dag.Cluster) {
	ce := e.shared.clusters[c.Name]
	if ce.grpcRefs++; ce.grpcRefs > 1 {
		return
	}
	ce.grpcRes = ce.res
	if envoy, ok := resourceMessage[*envoy_config_cluster_v3.Cluster](ce.res); ok {
		if m := translator.GRPCClusterOf(envoy, ce.cluster, e.cfg.Translator); m != envoy {
			ce.grpcRes = e.encode(m)
		}
	}
	e.set(xdscache.GroupGRPC, resource.ClusterType, c.Name, ce.grpcRes)
	e.computeGRPCAssignment(ce)
}

func (e *Engine) unrefGRPCCluster(c *dag.Cluster) {
	ce := e.shared.clusters[c.Name]
	if ce.grpcRefs--; ce.grpcRefs > 0 {
		return
	}
	ce.grpcRes, ce.grpcCLA = nil, nil
	e.set(xdscache.GroupGRPC, resource.ClusterType, c.Name, nil)
	e.set(xdscache.GroupGRPC, resource.EndpointType, c.Name, nil)
}

// computeAssignments recomputes a cluster's load assignments in every
// group that serves it.
func (e *Engine) computeAssignments(ce *clusterEntry) {
	ce.generation = e.u.generation
	name := ce.cluster.Name
	ce.claMsg = translator.LoadAssignment(name, &ce.cluster.Spec, e.snap, e.cfg.Translator)
	e.u.assignments++
	ce.cla = e.encode(ce.claMsg)
	e.set(xdscache.GroupEnvoy, resource.EndpointType, name, ce.cla)
	if ce.grpcRefs > 0 {
		e.computeGRPCAssignment(ce)
	}
	for _, d := range ce.dns {
		e.computeDNSAssignment(d)
	}
}

func (e *Engine) computeGRPCAssignment(ce *clusterEntry) {
	e.u.assignments++
	ce.grpcCLA = ce.cla
	if m := translator.GRPCLoadAssignmentOf(ce.claMsg, ce.cluster.Name, &ce.cluster.Spec, e.snap, e.cfg.Translator); m != ce.claMsg {
		ce.grpcCLA = e.encode(m)
	}
	e.set(xdscache.GroupGRPC, resource.EndpointType, ce.cluster.Name, ce.grpcCLA)
}

func (e *Engine) computeDNSAssignment(d *dnsEntry) {
	e.u.assignments++
	name := d.winner.name.Name
	d.cla = e.encode(translator.LoadAssignmentAs(d.entry.claMsg, name))
	e.set(xdscache.GroupDNS, resource.EndpointType, name, d.cla)
}

// refreshEndpoints recomputes the load assignments of the clusters whose
// Services' endpoints (or the Services themselves) changed.
func (e *Engine) refreshEndpoints(ch Changes) {
	refresh := func(ce *clusterEntry) {
		if ce.generation != e.u.generation {
			e.computeAssignments(ce)
		}
	}
	if ch.AllEndpoints {
		for _, ce := range e.shared.clusters {
			refresh(ce)
		}
		return
	}
	for svc := range ch.Endpoints {
		for _, ce := range e.shared.byService[svc] {
			refresh(ce)
		}
	}
	for k := range e.u.changed {
		if k.Kind == serviceKind {
			for _, ce := range e.shared.byService[k.NamespacedName()] {
				refresh(ce)
			}
		}
	}
}

func (e *Engine) refSecret(s *dag.Secret) {
	se := e.shared.secrets[s.Name]
	switch {
	case se == nil:
		se = &secretEntry{secret: s, res: e.encode(translator.Secret(s))}
		e.shared.secrets[s.Name] = se
		e.set(xdscache.GroupEnvoy, resource.SecretType, s.Name, se.res)
	case se.secret != s && !sameSecret(se.secret, s):
		// Every user of a changed Secret is rebuilt in the same update;
		// the last one added holds the new content, as in Assemble.
		se.secret, se.res = s, e.encode(translator.Secret(s))
		e.set(xdscache.GroupEnvoy, resource.SecretType, s.Name, se.res)
	}
	se.refs++
}

func (e *Engine) unrefSecret(s *dag.Secret) {
	se := e.shared.secrets[s.Name]
	if se.refs--; se.refs > 0 {
		return
	}
	delete(e.shared.secrets, s.Name)
	e.set(xdscache.GroupEnvoy, resource.SecretType, s.Name, nil)
}

func sameSecret(a, b *dag.Secret) bool {
	return a.Kind == b.Kind && a.Source == b.Source && bytes.Equal(a.Cert, b.Cert) && bytes.Equal(a.Key, b.Key)
}

func containsService(list []types.NamespacedName, nn types.NamespacedName) bool {
	for _, x := range list {
		if x == nn {
			return true
		}
	}
	return false
}

// resourceMessage returns a resource's message as T.
func resourceMessage[T proto.Message](r *xdscache.Resource) (T, bool) {
	var zero T
	if r == nil {
		return zero, false
	}
	m, ok := r.Message.(T)
	return m, ok
}
