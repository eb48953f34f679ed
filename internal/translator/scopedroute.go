package translator

import (
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// ScopedRoute returns the SRDS scope of a plain-HTTP virtual host: requests
// whose HostScopeHeader equals the host's FQDN (the :authority lowercased,
// without its port, or the wildcard that serves it; see hostScopeFilter)
// use the route configuration HTTPRouteName(fqdn).
//
// Scope and route configuration share one name so that the pair can be
// found from either side.
func ScopedRoute(vh *dag.VirtualHost) *envoy_config_route_v3.ScopedRouteConfiguration {
	name := HTTPRouteName(vh.FQDN)
	return &envoy_config_route_v3.ScopedRouteConfiguration{
		Name:                   name,
		RouteConfigurationName: name,
		Key: &envoy_config_route_v3.ScopedRouteConfiguration_Key{
			Fragments: []*envoy_config_route_v3.ScopedRouteConfiguration_Key_Fragment{{
				Type: &envoy_config_route_v3.ScopedRouteConfiguration_Key_Fragment_StringKey{StringKey: vh.FQDN},
			}},
		},
	}
}

// plainHosts returns the FQDNs of the plain-HTTP virtual hosts, which
// HTTPListener needs for its wildcard tables.
func plainHosts(vhs []*dag.VirtualHost) []string {
	out := make([]string, 0, len(vhs))
	for _, vh := range uniqueVirtualHosts(vhs) {
		out = append(out, vh.FQDN)
	}
	return out
}
