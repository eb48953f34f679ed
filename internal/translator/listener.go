package translator

import (
	"cmp"
	"slices"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_filter_listener_tls_inspector_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// Listener names. They double as the HCM stat prefixes, so that stats and
// resources are found under the same name.
const (
	HTTPListenerName  = "ingress_http"
	HTTPSListenerName = "ingress_https"
)

// HTTPListener returns the plain-HTTP listener for the given plain-HTTP
// host names. It exists even when the DAG has no virtual hosts, so that
// Envoy binds its port from the start and a request for an unknown host
// gets a 404 rather than a refused connection.
//
// Its HCM uses scoped RDS: a Lua filter (see hostScopeFilter) turns the
// :authority of each request into a scope key, the host lowercased and
// without its port, or the wildcard host that serves it, and that key
// selects one ScopedRouteConfiguration, which names the RouteConfiguration
// of that host. Each host is then a resource of its own, so a change to one
// host pushes one small route configuration instead of every plain-HTTP
// host in one resource; only wildcard hosts, and exact hosts next to them,
// are listed in the listener itself.
//
// rl is the rate limit service of the plain hosts (see
// plainRateLimitService); nil when none sends descriptors.
func HTTPListener(opts Options, hosts []string, rl *dag.RateLimitService) *envoy_config_listener_v3.Listener {
	filters := slices.Concat([]*envoy_filter_network_http_connection_manager_v3.HttpFilter{hostScopeFilter(hosts)}, globalRateLimitFilters(rl))
	hcm := httpConnectionManager(HTTPListenerName, append(filters, cookieFilter())...)
	hcm.RouteSpecifier = &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_ScopedRoutes{
		ScopedRoutes: scopedRoutes(),
	}
	return &envoy_config_listener_v3.Listener{
		Name:    HTTPListenerName,
		Address: socketAddress(opts.ListenAddress, opts.HTTPPort),
		FilterChains: []*envoy_config_listener_v3.FilterChain{{
			Filters: []*envoy_config_listener_v3.Filter{hcmFilter(hcm)},
		}},
	}
}

// scopedRoutes configures SRDS for the plain-HTTP HCM. The key is the
// whole value of HostScopeHeader, which the Lua filter sets before it
// clears the route cache, so that Envoy computes the key again from it.
func scopedRoutes() *envoy_filter_network_http_connection_manager_v3.ScopedRoutes {
	return &envoy_filter_network_http_connection_manager_v3.ScopedRoutes{
		Name: HTTPListenerName,
		ScopeKeyBuilder: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder{
			Fragments: []*envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder{{
				Type: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor_{
					HeaderValueExtractor: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor{
						Name: HostScopeHeader,
					},
				},
			}},
		},
		RdsConfigSource: adsConfigSource(),
		ConfigSpecifier: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopedRds{
			ScopedRds: &envoy_filter_network_http_connection_manager_v3.ScopedRds{
				ScopedRdsConfigSource: adsConfigSource(),
			},
		},
	}
}

// HTTPSListener returns the TLS listener, with one filter chain per secure
// virtual host chosen by SNI, then the fallback certificate's chain when a
// host uses it (fallback.go), or nil when no secure virtual host can be
// served: Envoy rejects a listener without filter chains.
//
// A virtual host that cannot be served safely gets no filter chain (and so
// no TLS handshake) rather than a degraded one: a terminating host without
// a certificate, a TCP proxy without a cluster, or an authorization without
// a cluster, which would otherwise let requests through unchecked.
func HTTPSListener(svhs []*dag.SecureVirtualHost, opts Options) *envoy_config_listener_v3.Listener {
	hosts := uniqueSecureVirtualHosts(svhs)
	slices.SortStableFunc(hosts, func(a, b *dag.SecureVirtualHost) int { return cmp.Compare(a.FQDN, b.FQDN) })

	var chains []*envoy_config_listener_v3.FilterChain
	for _, svh := range hosts {
		if fc := HTTPSFilterChain(svh); fc != nil {
			chains = append(chains, fc)
		}
	}
	if s := fallbackSecret(hosts); s != "" {
		chains = append(chains, FallbackFilterChain(s))
	}
	return HTTPSListenerWithChains(chains, opts)
}

// HTTPSListenerWithChains returns the TLS listener holding the given filter
// chains, in that order, or nil when there are none. HTTPSListener calls it
// with one chain per servable secure virtual host, sorted by FQDN; an
// incremental build that keeps each host's chain calls it directly.
func HTTPSListenerWithChains(chains []*envoy_config_listener_v3.FilterChain, opts Options) *envoy_config_listener_v3.Listener {
	if len(chains) == 0 {
		return nil
	}
	return &envoy_config_listener_v3.Listener{
		Name:    HTTPSListenerName,
		Address: socketAddress(opts.ListenAddress, opts.HTTPSPort),
		ListenerFilters: []*envoy_config_listener_v3.ListenerFilter{{
			Name: filterTLSInspector,
			ConfigType: &envoy_config_listener_v3.ListenerFilter_TypedConfig{
				TypedConfig: toAny(&envoy_filter_listener_tls_inspector_v3.TlsInspector{}),
			},
		}},
		FilterChains: chains,
	}
}

// HTTPSFilterChain builds the filter chain of one secure virtual host, or
// nil when it cannot be served (see HTTPSListener).
func HTTPSFilterChain(svh *dag.SecureVirtualHost) *envoy_config_listener_v3.FilterChain {
	fc := &envoy_config_listener_v3.FilterChain{
		Name: svh.FQDN,
		FilterChainMatch: &envoy_config_listener_v3.FilterChainMatch{
			// Envoy matches "*.example.com" too, and prefers an exact name.
			ServerNames: []string{svh.FQDN},
		},
	}
	switch {
	case svh.Passthrough:
		if svh.TCPProxy == nil || svh.TCPProxy.Cluster == nil {
			return nil
		}
		// Without termination the only thing to match on is the ClientHello,
		// so require one: a plaintext connection must not reach the backend.
		fc.FilterChainMatch.TransportProtocol = "tls"
		fc.Filters = tcpProxyFilters(svh.TCPProxy)
	case svh.TCPProxy != nil:
		if svh.TCPProxy.Cluster == nil || svh.Secret == nil {
			return nil
		}
		fc.TransportSocket = downstreamTLSSocket(svh, nil)
		fc.Filters = tcpProxyFilters(svh.TCPProxy)
	default:
		if svh.Secret == nil || (svh.Authorization != nil && svh.Authorization.Cluster == nil) {
			return nil
		}
		fc.TransportSocket = downstreamTLSSocket(svh, []string{"h2", "http/1.1"})
		fc.Filters = []*envoy_config_listener_v3.Filter{hcmFilter(httpsConnectionManager(svh))}
	}
	return fc
}

// httpsConnectionManager is the HCM of one terminated secure virtual host.
// Secure hosts use plain RDS rather than scopes: SNI has already picked the
// host, so its filter chain names its one route configuration directly.
func httpsConnectionManager(svh *dag.SecureVirtualHost) *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager {
	var filters []*envoy_filter_network_http_connection_manager_v3.HttpFilter
	if svh.JWT != nil {
		// Verified before ext_authz, which may then read the token's
		// claims.
		filters = append(filters, jwtFilter(svh))
	}
	if svh.Authorization != nil {
		filters = append(filters, extAuthzFilter(svh.Authorization))
	}
	filters = append(filters, globalRateLimitFilters(svh.RateLimitService)...)
	if hostRewritesCookies(svh.Routes) {
		filters = append(filters, cookieFilter())
	}
	hcm := httpConnectionManager(HTTPSListenerName, filters...)
	forwardClientCert(hcm, svh.ClientAuth)
	hcm.RouteSpecifier = &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_Rds{
		Rds: &envoy_filter_network_http_connection_manager_v3.Rds{
			ConfigSource:    adsConfigSource(),
			RouteConfigName: HTTPSRouteName(svh.FQDN),
		},
	}
	return hcm
}

func socketAddress(address string, port uint32) *envoy_config_core_v3.Address {
	return new(addressBlock).set(address, port)
}

// addressBlock holds the four messages of a socket address, so that they
// take one allocation (or none of their own, in a larger block): every
// host has three gRPC server listeners.
type addressBlock struct {
	addr  envoy_config_core_v3.Address
	oneof envoy_config_core_v3.Address_SocketAddress
	sock  envoy_config_core_v3.SocketAddress
	port  envoy_config_core_v3.SocketAddress_PortValue
}

func (b *addressBlock) set(address string, port uint32) *envoy_config_core_v3.Address {
	b.port.PortValue = port
	b.sock.Protocol, b.sock.Address, b.sock.PortSpecifier = envoy_config_core_v3.SocketAddress_TCP, address, &b.port
	b.oneof.SocketAddress = &b.sock
	b.addr.Address = &b.oneof
	return &b.addr
}
