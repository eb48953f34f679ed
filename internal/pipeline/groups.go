package pipeline

import (
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

const (
	typeListener    = resource.ListenerType
	typeScopedRoute = resource.ScopedRouteType
	typeRoute       = resource.RouteType
	typeCluster     = resource.ClusterType
	typeEndpoint    = resource.EndpointType
	typeSecret      = resource.SecretType
)

// groupDef is how the pipeline builds one consumer group: the whole
// translation, and — for the endpoint path — which load assignments it
// serves and how one is rebuilt.
type groupDef struct {
	name  xdscache.Group
	types []string
	// staged groups publish make-before-break (staging.go); warmupRoutes
	// adds gRPC's warm-up routes.
	staged, warmupRoutes bool
	translate            func(*dag.DAG, *objects.Snapshot, translator.Options) *translator.Resources
	assignments          func(*dag.DAG) []assignment
	loadAssignment       func(string, *dag.ClusterSpec, *objects.Snapshot, translator.Options) *envoy_config_endpoint_v3.ClusterLoadAssignment
}

// assignment names a load assignment and the spec it is built from.
type assignment struct {
	name string
	spec *dag.ClusterSpec
}

var groups = []groupDef{
	{
		name:           xdscache.GroupEnvoy,
		staged:         true,
		types:          []string{typeListener, typeScopedRoute, typeRoute, typeCluster, typeEndpoint, typeSecret},
		translate:      translator.Envoy,
		assignments:    clusterAssignments,
		loadAssignment: translator.LoadAssignment,
	},
	{
		name:           xdscache.GroupGRPC,
		staged:         true,
		warmupRoutes:   true,
		types:          []string{typeListener, typeRoute, typeCluster, typeEndpoint},
		translate:      translator.GRPC,
		assignments:    grpcAssignments,
		loadAssignment: translator.GRPCLoadAssignment,
	},
	{
		name:           xdscache.GroupDNS,
		types:          []string{typeCluster, typeEndpoint},
		translate:      translator.DNS,
		assignments:    dnsAssignments,
		loadAssignment: translator.LoadAssignment,
	},
}

var groupByName = func() map[xdscache.Group]groupDef {
	m := map[xdscache.Group]groupDef{}
	for _, g := range groups {
		m[g.name] = g
	}
	return m
}()

// clusterAssignments lists one load assignment per DAG cluster, named like
// the cluster.
func clusterAssignments(d *dag.DAG) []assignment {
	out := make([]assignment, 0, len(d.Clusters))
	for _, c := range d.Clusters {
		out = append(out, assignment{name: c.Name, spec: &c.Spec})
	}
	return out
}

// grpcAssignments lists the load assignments of the clusters gRPC clients
// are served, one per cluster however many hosts use it.
func grpcAssignments(d *dag.DAG) []assignment {
	seen := map[string]bool{}
	var out []assignment
	for _, h := range translator.GRPCHosts(d) {
		for _, c := range translator.GRPCClusters(h) {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, assignment{name: c.Name, spec: &c.Spec})
			}
		}
	}
	return out
}

// dnsAssignments lists one load assignment per DNS name, named by it.
func dnsAssignments(d *dag.DAG) []assignment {
	out := make([]assignment, 0, len(d.DNSNames))
	for _, n := range d.DNSNames {
		out = append(out, assignment{name: n.Name, spec: &n.Cluster.Spec})
	}
	return out
}
