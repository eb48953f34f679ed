package translator

import (
	"cmp"
	"slices"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// The ports a gRPC client may name in its dial target. They are only names:
// a proxyless client never connects to the ingress, it picks a backend
// itself, so "xds:///api.example.com:443" and "xds:///api.example.com"
// reach the same routes.
const (
	grpcHTTPSPortSuffix = ":443"
	grpcHTTPPortSuffix  = ":80"
)

// grpcStatPrefix is the HCM stat prefix of every API listener. gRPC ignores
// it, but the field is required.
const grpcStatPrefix = "grpc"

// GRPCRouteName is the name of a host's RouteConfiguration in the grpc
// group.
func GRPCRouteName(fqdn string) string { return "grpc/" + fqdn }

// GRPCHost is one host name as proxyless gRPC clients see it: the DAG's
// plain-HTTP and secure virtual hosts of that name, either of which may be
// nil.
type GRPCHost struct {
	FQDN   string
	Plain  *dag.VirtualHost
	Secure *dag.SecureVirtualHost
}

// GRPCHosts pairs the DAG's plain and secure virtual hosts by FQDN, sorted
// by FQDN. As for Envoy, the first virtual host of a name wins.
func GRPCHosts(d *dag.DAG) []GRPCHost {
	if d == nil {
		return nil
	}
	byName := map[string]*GRPCHost{}
	get := func(fqdn string) *GRPCHost {
		h := byName[fqdn]
		if h == nil {
			h = &GRPCHost{FQDN: fqdn}
			byName[fqdn] = h
		}
		return h
	}
	for _, vh := range uniqueVirtualHosts(d.VirtualHosts) {
		get(vh.FQDN).Plain = vh
	}
	for _, svh := range uniqueSecureVirtualHosts(d.SecureVirtualHosts) {
		get(svh.FQDN).Secure = svh
	}
	out := make([]GRPCHost, 0, len(byName))
	for _, h := range byName {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b GRPCHost) int { return cmp.Compare(a.FQDN, b.FQDN) })
	return out
}

// GRPC translates the DAG into the resources served to proxyless gRPC
// clients (dial targets "xds:///<fqdn>" and "xds:///<fqdn>:<port>"): for
// each host with routes, its API listeners, its server listeners (for
// xDS-enabled backends, see GRPCServerListeners) and one route configuration, and
// a cluster and load assignment for every cluster those routes forward to.
//
// Everything here is restricted to what grpc-go's xDS client accepts. It
// decodes every resource of a response, and one it rejects NACKs the whole
// response, so a single Envoy-only field would break every host at once.
// The shaping is described on GRPCRouteConfig, GRPCClusters, GRPCCluster
// and GRPCLoadAssignment. There are no Secrets and no scoped routes: gRPC
// takes its certificates from its own bootstrap and has no SRDS.
func GRPC(d *dag.DAG, snap *objects.Snapshot, opts Options) *Resources {
	if snap == nil {
		snap = objects.NewSnapshot()
	}
	res := &Resources{}
	clusters := map[string]*dag.Cluster{}
	hosts := map[string]bool{}
	for _, h := range GRPCHosts(d) {
		hosts[h.FQDN] = true
		rc := GRPCRouteConfig(h)
		if rc == nil {
			continue
		}
		res.Listeners = append(res.Listeners, GRPCListeners(h)...)
		res.Listeners = append(res.Listeners, GRPCServerListeners(h)...)
		res.Routes = append(res.Routes, rc)
		for _, c := range GRPCClusters(h) {
			clusters[c.Name] = c
		}
	}
	for _, c := range clusters {
		res.Clusters = append(res.Clusters, GRPCCluster(c, opts))
		if ServesEndpoints(&c.Spec) {
			res.Endpoints = append(res.Endpoints, GRPCLoadAssignment(c.Name, &c.Spec, snap, opts))
		}
	}
	if d != nil {
		res.addMesh(d, func(name string) bool { return hosts[name] }, func(ms *dag.MeshService) *Resources { return MeshGRPC(ms, snap, opts) })
	}
	res.sort()
	return res
}

// GRPCListeners returns the API listeners of a host, or nil when it serves
// no routes. The listener name is exactly the dial target's path, port
// included, so a host gets one listener per way it may be dialled: the
// bare name always, "<fqdn>:443" when it has TLS, and "<fqdn>:80" when it
// serves plain-HTTP routes. Each names the same route configuration.
func GRPCListeners(h GRPCHost) []*envoy_config_listener_v3.Listener {
	if routes, _ := grpcRoutes(h); len(routes) == 0 {
		return nil
	}
	names := []string{h.FQDN}
	if h.Secure != nil {
		names = append(names, h.FQDN+grpcHTTPSPortSuffix)
	}
	if h.Plain != nil && len(h.Plain.Routes) > 0 {
		names = append(names, h.FQDN+grpcHTTPPortSuffix)
	}
	// The listeners differ only in name: they share one encoded HCM.
	api := grpcAPIListener(GRPCRouteName(h.FQDN))
	blocks := make([]struct {
		listener envoy_config_listener_v3.Listener
		api      envoy_config_listener_v3.ApiListener
	}, len(names))
	out := make([]*envoy_config_listener_v3.Listener, len(names))
	for i, name := range names {
		b := &blocks[i]
		b.api.ApiListener = api
		b.listener.Name, b.listener.ApiListener = name, &b.api
		out[i] = &b.listener
	}
	return out
}

// grpcAPIListener is the api_listener of a client-side listener: an HCM
// that fetches its routes over RDS on the ADS stream (gRPC accepts only
// ads{} or self{} there) and runs the router as its only, and so last,
// HTTP filter. gRPC reads nothing else of the HCM; in particular no
// ext_authz filter may appear, which gRPC NACKs.
func grpcAPIListener(routeConfig string) *anypb.Any {
	hcm := &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{
		StatPrefix: grpcStatPrefix,
		RouteSpecifier: &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_Rds{
			Rds: &envoy_filter_network_http_connection_manager_v3.Rds{
				ConfigSource:    adsConfigSource(),
				RouteConfigName: routeConfig,
			},
		},
		HttpFilters: []*envoy_filter_network_http_connection_manager_v3.HttpFilter{routerFilter()},
	}
	return toAny(hcm)
}
