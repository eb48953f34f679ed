package translator

import (
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// ScopedRoute returns the SRDS scope of a plain-HTTP virtual host: requests
// whose :authority (without port) equals the host's FQDN use the route
// configuration HTTPRouteName(fqdn).
//
// Scope and route configuration share one name so that the pair can be
// found from either side. Keys compare as exact, case-sensitive strings,
// which is why the DAG lowercases FQDNs; a client that sends an uppercase
// Host matches no scope and gets a 404.
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
