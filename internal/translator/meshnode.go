package translator

import (
	"strconv"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_filter_network_tcp_proxy_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// MeshNodeListenerName is the node proxy's listener of one port.
func MeshNodeListenerName(port int32) string { return "mesh/" + strconv.Itoa(int(port)) }

// MeshNode translates the DAG's mesh for the node proxies (the "mesh"
// group): an Envoy on each node that workloads reach by a DNS answer of
// the node's address. A listener listens on each port some mesh Service
// has; the port's appProtocol decides its kind (see dag.MeshPort.HTTP):
//
//   - HTTP: one virtual host per Service with that port, matched by Host
//     ("<service>.<namespace>", with the port and with
//     ".svc.cluster.local"), routing to the Service's cluster as gRPC
//     clients are routed, the split's matches first;
//   - TCP: a connection carries no name to route by, so the port forwards
//     to the one Service that has it. When several TCP Services share the
//     port, or a TCP Service shares it with HTTP ones, the first Service by
//     namespace and name keeps it and the others are left out of the node
//     proxy (they are still served to gRPC and DNS clients).
//
// Clusters are Envoy's own, named as in the grpc group, so a split's
// dead backend gives its share to the others here too. A Service that
// TrafficTargets name admits only their sources' pod IPs (meshaccess.go):
// per virtual host on HTTP ports, on the whole listener on TCP ones.
func MeshNode(d *dag.DAG, snap *objects.Snapshot, opts Options) *Resources {
	res := &Resources{}
	if d == nil {
		return res
	}
	if snap == nil {
		snap = objects.NewSnapshot()
	}
	type portUse struct {
		http []*dag.MeshService
		tcp  *dag.MeshService
		// first decides the port's kind: the first Service that has it.
		firstHTTP bool
	}
	ports := map[int32]*portUse{}
	var order []int32
	for _, ms := range d.Mesh {
		for _, p := range ms.Ports {
			u := ports[p.Port]
			if u == nil {
				u = &portUse{firstHTTP: p.HTTP}
				ports[p.Port] = u
				order = append(order, p.Port)
			}
			switch {
			case p.HTTP && u.firstHTTP:
				u.http = append(u.http, ms)
			case !p.HTTP && !u.firstHTTP && u.tcp == nil:
				u.tcp = ms
			}
		}
	}
	clusters := map[string]*dag.Cluster{}
	for _, port := range order {
		u := ports[port]
		if u.firstHTTP {
			res.Listeners = append(res.Listeners, meshHTTPListener(port, opts))
			res.Routes = append(res.Routes, meshNodeRoutes(port, u.http, clusters))
			continue
		}
		c := meshPortOf(u.tcp, port).Cluster
		clusters[c.Name] = c
		res.Listeners = append(res.Listeners, meshTCPListener(port, c, u.tcp.Access, opts))
	}
	for _, c := range clusters {
		named := &dag.Cluster{Name: MeshClusterName(c), Spec: c.Spec}
		res.Clusters = append(res.Clusters, Cluster(named, opts))
		res.Endpoints = append(res.Endpoints, LoadAssignment(named.Name, &c.Spec, snap, opts))
	}
	res.sort()
	return res
}

func meshPortOf(ms *dag.MeshService, port int32) dag.MeshPort {
	for _, p := range ms.Ports {
		if p.Port == port {
			return p
		}
	}
	return dag.MeshPort{}
}

func meshHTTPListener(port int32, opts Options) *envoy_config_listener_v3.Listener {
	name := MeshNodeListenerName(port)
	hcm := httpConnectionManager(name)
	hcm.RouteSpecifier = &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_Rds{
		Rds: &envoy_filter_network_http_connection_manager_v3.Rds{ConfigSource: adsConfigSource(), RouteConfigName: name},
	}
	return &envoy_config_listener_v3.Listener{
		Name:         name,
		Address:      socketAddress(opts.ListenAddress, uint32(port)),
		FilterChains: []*envoy_config_listener_v3.FilterChain{{Filters: []*envoy_config_listener_v3.Filter{hcmFilter(hcm)}}},
	}
}

func meshTCPListener(port int32, c *dag.Cluster, access *dag.MeshAccess, opts Options) *envoy_config_listener_v3.Listener {
	name := MeshNodeListenerName(port)
	tcp := &envoy_filter_network_tcp_proxy_v3.TcpProxy{
		StatPrefix:       name,
		ClusterSpecifier: &envoy_filter_network_tcp_proxy_v3.TcpProxy_Cluster{Cluster: MeshClusterName(c)},
	}
	var filters []*envoy_config_listener_v3.Filter
	if access != nil {
		filters = append(filters, meshNetworkRBACFilter(name, access))
	}
	filters = append(filters, &envoy_config_listener_v3.Filter{
		Name:       filterTCPProxy,
		ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(tcp)},
	})
	return &envoy_config_listener_v3.Listener{
		Name:         name,
		Address:      socketAddress(opts.ListenAddress, uint32(port)),
		FilterChains: []*envoy_config_listener_v3.FilterChain{{Filters: filters}},
	}
}

// meshNodeRoutes is an HTTP port's route configuration: a virtual host
// per Service, by the names a workload in the cluster uses for it.
func meshNodeRoutes(port int32, services []*dag.MeshService, clusters map[string]*dag.Cluster) *envoy_config_route_v3.RouteConfiguration {
	rc := &envoy_config_route_v3.RouteConfiguration{Name: MeshNodeListenerName(port)}
	ps := ":" + strconv.Itoa(int(port))
	for _, ms := range services {
		p := meshPortOf(ms, port)
		vh := meshRouteConfig("", ms.Name, p).VirtualHosts[0]
		long := ms.Name + ".svc.cluster.local"
		vh.Domains = []string{ms.Name, ms.Name + ps, long, long + ps}
		vh.TypedPerFilterConfig = meshVirtualHostRBAC(ms.Access)
		rc.VirtualHosts = append(rc.VirtualHosts, vh)
		clusters[p.Cluster.Name] = p.Cluster
		for _, r := range p.Routes {
			clusters[r.Cluster.Name] = r.Cluster
		}
	}
	return rc
}
