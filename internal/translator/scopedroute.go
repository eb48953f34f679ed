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
	// One allocation for the messages: every plain host has a scope.
	b := &struct {
		scope     envoy_config_route_v3.ScopedRouteConfiguration
		key       envoy_config_route_v3.ScopedRouteConfiguration_Key
		fragments [1]*envoy_config_route_v3.ScopedRouteConfiguration_Key_Fragment
		fragment  envoy_config_route_v3.ScopedRouteConfiguration_Key_Fragment
		stringKey envoy_config_route_v3.ScopedRouteConfiguration_Key_Fragment_StringKey
	}{}
	b.stringKey.StringKey = vh.FQDN
	b.fragment.Type = &b.stringKey
	b.fragments[0] = &b.fragment
	b.key.Fragments = b.fragments[:]
	b.scope.Name, b.scope.RouteConfigurationName, b.scope.Key = name, name, &b.key
	return &b.scope
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
