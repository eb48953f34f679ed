package translator

import (
	"strconv"
	"strings"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// The mesh's resources for proxyless gRPC and DNS clients. They are made
// from the DAG's mesh selection (dag.MeshService) with the same cluster
// and load-assignment builders as the ingress, so a split's backends are
// weighted localities and a backend without endpoints gives its share to
// the others in every consumer.
//
// Their names never collide with an ingress resource of the same content:
// clusters are prefixed "mesh:", which no Kubernetes namespace (and so no
// ingress cluster name) can start with, and route configurations
// "mesh/". Listeners carry exactly the dial target, "<service>.<namespace>"
// and "<service>.<namespace>:<port>", as gRPC requires.

// MeshClusterName is the name of a mesh port's cluster in the grpc group.
func MeshClusterName(c *dag.Cluster) string { return "mesh:" + c.Name }

// MeshRouteName is the name of a mesh port's RouteConfiguration in the
// grpc group.
func MeshRouteName(ms *dag.MeshService, port int32) string {
	return "mesh/" + ms.Name + ":" + strconv.Itoa(int(port))
}

// MeshGRPC returns the grpc group's resources of one mesh Service: per
// port, an API listener "<name>:<port>" and its route configuration, plus
// "<name>" for the lowest port (a dial target without a port), the
// clusters and load assignments those routes use, and the server
// listeners its xDS-enabled backends enforce TrafficTargets with
// (MeshGRPCServerListeners).
func MeshGRPC(ms *dag.MeshService, snap *objects.Snapshot, opts Options) *Resources {
	res := &Resources{Listeners: MeshGRPCServerListeners(ms)}
	clusters := map[string]*dag.Cluster{}
	for i, p := range ms.Ports {
		rn := MeshRouteName(ms, p.Port)
		api := grpcAPIListener(rn)
		names := []string{ms.Name + ":" + strconv.Itoa(int(p.Port))}
		if i == 0 {
			names = append(names, ms.Name)
		}
		for _, n := range names {
			res.Listeners = append(res.Listeners, apiListener(n, api))
		}
		res.Routes = append(res.Routes, meshRouteConfig(rn, ms.Name, p))
		clusters[p.Cluster.Name] = p.Cluster
		for _, r := range p.Routes {
			clusters[r.Cluster.Name] = r.Cluster
		}
	}
	for _, c := range clusters {
		named := &dag.Cluster{Name: MeshClusterName(c), Spec: c.Spec}
		res.Clusters = append(res.Clusters, GRPCCluster(named, opts))
		res.Endpoints = append(res.Endpoints, GRPCLoadAssignment(named.Name, &c.Spec, snap, opts))
	}
	res.sort()
	return res
}

// meshRouteConfig routes a mesh port: the split's matches first, each to
// the split's cluster, then everything else to the port's cluster.
func meshRouteConfig(name, host string, p dag.MeshPort) *envoy_config_route_v3.RouteConfiguration {
	routes := make([]*envoy_config_route_v3.Route, 0, len(p.Routes)+1)
	for _, r := range p.Routes {
		routes = append(routes, &envoy_config_route_v3.Route{
			Name:   r.Match,
			Match:  meshMatch(r),
			Action: meshAction(r.Cluster),
		})
	}
	routes = append(routes, &envoy_config_route_v3.Route{
		Match:  &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}},
		Action: meshAction(p.Cluster),
	})
	return routeConfig(name, host, routes, nil)
}

// meshMatch is an HTTPRouteGroup match: SMI's pathRegex matches the whole
// path, methods become one regex on :method, which gRPC and Envoy both
// read.
func meshMatch(r dag.MeshRoute) *envoy_config_route_v3.RouteMatch {
	m := &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}}
	if r.PathRegex != "" {
		m.PathSpecifier = &envoy_config_route_v3.RouteMatch_SafeRegex{SafeRegex: regex(r.PathRegex)}
	}
	if len(r.Methods) > 0 {
		m.Headers = append(m.Headers, headerMatcher(dag.HeaderMatch{Name: ":method", Kind: dag.MatchRegex, Value: strings.Join(r.Methods, "|")}))
	}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, headerMatcher(h))
	}
	return m
}

func meshAction(c *dag.Cluster) *envoy_config_route_v3.Route_Route {
	return &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{
		ClusterSpecifier: &envoy_config_route_v3.RouteAction_Cluster{Cluster: MeshClusterName(c)},
	}}
}

// MeshDNSName is the DNS name of a mesh Service: its name below the mesh
// zone answers with the endpoints of its lowest port's cluster, so with
// the split's weights. A split restricted by matches does not apply to
// DNS clients, which send no requests a match could read.
func MeshDNSName(ms *dag.MeshService) dag.DNSName {
	return dag.DNSName{Name: ms.Name, Cluster: ms.Ports[0].Cluster}
}

// MeshDNS returns the dns group's resources of one mesh Service.
func MeshDNS(ms *dag.MeshService, snap *objects.Snapshot, opts Options) *Resources {
	n := MeshDNSName(ms)
	return &Resources{
		Clusters:  []*envoy_config_cluster_v3.Cluster{DNSCluster(n, opts)},
		Endpoints: []*envoy_config_endpoint_v3.ClusterLoadAssignment{LoadAssignment(n.Name, &n.Cluster.Spec, snap, opts)},
	}
}

// addMesh appends every mesh Service's resources for one group, leaving
// out a Service whose name the ingress already serves in that group:
// the ingress was there first (see the caller).
func (r *Resources) addMesh(d *dag.DAG, taken func(name string) bool, build func(*dag.MeshService) *Resources) {
	for _, ms := range d.Mesh {
		if taken(ms.Name) {
			continue
		}
		m := build(ms)
		r.Listeners = append(r.Listeners, m.Listeners...)
		r.Routes = append(r.Routes, m.Routes...)
		r.Clusters = append(r.Clusters, m.Clusters...)
		r.Endpoints = append(r.Endpoints, m.Endpoints...)
	}
}

func apiListener(name string, api *anypb.Any) *envoy_config_listener_v3.Listener {
	return &envoy_config_listener_v3.Listener{
		Name:        name,
		ApiListener: &envoy_config_listener_v3.ApiListener{ApiListener: api},
	}
}
