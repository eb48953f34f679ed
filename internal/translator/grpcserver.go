package translator

import (
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// grpcServerAddresses are the listening hosts an xDS-enabled gRPC server
// may name. grpc-go serves a server listener only when its address equals
// the host the server listens on (port 0 matches any port), and the
// resource name cannot carry the port, which Switchyard does not know; so
// each host gets one server listener per common listening host.
var grpcServerAddresses = []string{"0.0.0.0", "::", "127.0.0.1"}

// GRPCServerListenerName is the name of the server listener that an
// xDS-enabled gRPC backend of a host (or of a mesh Service, named
// "<service>.<namespace>"), listening on address, uses as its bootstrap's
// server_listener_resource_name_template (without "%s").
func GRPCServerListenerName(fqdn, address string) string {
	return GRPCServerListenerPrefix + fqdn + "/" + address
}

// GRPCServerListenerPrefix starts the name of every gRPC server listener.
const GRPCServerListenerPrefix = "grpc-server/"

// GRPCServerListeners returns the server listeners of a host: what an
// xDS-enabled gRPC server (gRFC A36) behind the host's routes enforces. A
// proxyless client is the very source an IP filter judges, so the filter
// cannot run in the client; the backend runs it instead, with gRPC's RBAC
// filter (gRFC A41) configured exactly as Envoy's: the host's list on the
// virtual host, each route's own list on that route, replacing it.
//
// The listeners accept any :authority (the backend answers whatever name
// it was dialled by) and route by the host's own route matches, with the
// non-forwarding action servers require. An RPC no route matches fails
// with UNAVAILABLE. A host without IP filters gets them too, so that a
// policy added or removed later never takes a backend out of service.
func GRPCServerListeners(h GRPCHost) []*envoy_config_listener_v3.Listener {
	routes, _ := grpcRoutes(h)
	if len(routes) == 0 {
		return nil
	}
	vh := &envoy_config_route_v3.VirtualHost{Name: h.FQDN, Domains: []string{"*"}}
	if h.Secure != nil && len(h.Secure.Routes) > 0 {
		vh.TypedPerFilterConfig = grpcServerPolicies(h.Secure.IPFilter)
	} else if h.Plain != nil {
		vh.TypedPerFilterConfig = grpcServerPolicies(h.Plain.IPFilter)
	}
	if !anyRouteIPFilter(routes) {
		// Only a route's own list needs the route table; without one, a
		// single route carries the whole host.
		routes = []*dag.Route{{PathMatch: dag.PathMatch{Kind: dag.PathPrefix, Value: "/"}}}
	}
	for _, r := range routes {
		if r == nil || len(r.QueryParamMatches) > 0 {
			continue
		}
		rt := &envoy_config_route_v3.Route{
			Name:                 r.Name,
			Match:                routeMatch(r),
			Action:               &envoy_config_route_v3.Route_NonForwardingAction{NonForwardingAction: &envoy_config_route_v3.NonForwardingAction{}},
			TypedPerFilterConfig: grpcServerPolicies(r.IPFilter),
		}
		grpcMatch(rt.Match)
		vh.Routes = append(vh.Routes, rt)
	}
	return grpcServerListeners(h.FQDN, GRPCRouteName(h.FQDN), vh)
}

// grpcServerListeners are the server listeners of one name, one per
// common listening host, all routing by vh with the RBAC filter its
// policies configure.
func grpcServerListeners(name, routeConfig string, vh *envoy_config_route_v3.VirtualHost) []*envoy_config_listener_v3.Listener {
	hcm := toAny(&envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{
		StatPrefix: grpcStatPrefix,
		RouteSpecifier: &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_RouteConfig{
			RouteConfig: &envoy_config_route_v3.RouteConfiguration{Name: routeConfig, VirtualHosts: []*envoy_config_route_v3.VirtualHost{vh}},
		},
		HttpFilters: []*envoy_filter_network_http_connection_manager_v3.HttpFilter{rbacFilter(), routerFilter()},
	})
	// The listeners differ only in name and address: each one's messages
	// are a block of one allocation for all, as every host has them.
	blocks := make([]serverListenerBlock, len(grpcServerAddresses))
	out := make([]*envoy_config_listener_v3.Listener, len(grpcServerAddresses))
	for i, addr := range grpcServerAddresses {
		b := &blocks[i]
		b.config.TypedConfig = hcm
		b.filter.Name, b.filter.ConfigType = filterHTTPConnectionManager, &b.config
		b.filters[0] = &b.filter
		b.chain.Filters = b.filters[:]
		b.chains[0] = &b.chain
		b.listener.Name = GRPCServerListenerName(name, addr)
		b.listener.Address = b.address.set(addr, 0)
		b.listener.FilterChains = b.chains[:]
		out[i] = &b.listener
	}
	return out
}

// serverListenerBlock holds the messages of one gRPC server listener.
type serverListenerBlock struct {
	listener envoy_config_listener_v3.Listener
	address  addressBlock
	chains   [1]*envoy_config_listener_v3.FilterChain
	chain    envoy_config_listener_v3.FilterChain
	filters  [1]*envoy_config_listener_v3.Filter
	filter   envoy_config_listener_v3.Filter
	config   envoy_config_listener_v3.Filter_TypedConfig
}

func grpcServerPolicies(f *dag.IPFilter) map[string]*anypb.Any {
	if f == nil {
		return nil
	}
	return map[string]*anypb.Any{filterRBAC: ipFilterConfig(f)}
}

func anyRouteIPFilter(routes []*dag.Route) bool {
	for _, r := range routes {
		if r != nil && r.IPFilter != nil {
			return true
		}
	}
	return false
}
