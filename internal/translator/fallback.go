package translator

import (
	"cmp"
	"slices"
	"strings"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// Names of the fallback certificate's filter chain and route
// configuration, Contour's.
const (
	FallbackChainName = "fallback-certificate"
	FallbackRouteName = "ingress_fallbackcert"
)

// The fallback certificate serves the hosts that enable it to TLS clients
// that send no SNI, or a server name no filter chain claims. Envoy picks a
// filter chain by server name first, and a chain without server names
// matches every name the others leave; so one chain on the HTTPS listener
// terminates those connections with the --fallback-certificate Secret,
// and its HTTP connection manager routes by Host through one route
// configuration holding the virtual host of each such host. gRPC clients
// never see it: they get one API listener per host and no filter chains;
// the DNS group has no listeners at all.

// FallbackVirtualHost returns what a secure host adds to the fallback
// route configuration: the virtual host of its own route configuration,
// with the same routes, or nil when it does not use the fallback
// certificate (see usesFallback).
//
// A wildcard host answers for its own domain here rather than for every
// name: the route configuration is shared, and Envoy prefers exact names
// to it.
func FallbackVirtualHost(svh *dag.SecureVirtualHost) *envoy_config_route_v3.VirtualHost {
	if !usesFallback(svh) {
		return nil
	}
	vh := HTTPSRouteConfig(svh).VirtualHosts[0]
	if strings.HasPrefix(svh.FQDN, "*.") {
		vh.Domains = []string{svh.FQDN}
	}
	return vh
}

// FallbackRouteConfig returns the fallback route configuration holding the
// given virtual hosts, sorted by name, or nil when there are none.
func FallbackRouteConfig(vhosts []*envoy_config_route_v3.VirtualHost) *envoy_config_route_v3.RouteConfiguration {
	if len(vhosts) == 0 {
		return nil
	}
	vhosts = slices.Clone(vhosts)
	slices.SortStableFunc(vhosts, func(a, b *envoy_config_route_v3.VirtualHost) int { return cmp.Compare(a.GetName(), b.GetName()) })
	return &envoy_config_route_v3.RouteConfiguration{Name: FallbackRouteName, VirtualHosts: vhosts}
}

// FallbackFilterChain returns the fallback filter chain, terminating TLS
// with the named certificate. It is the same for every host: TLS 1.2 to
// 1.3 (as Contour, the hosts' own versions do not apply, since the chain
// is chosen before any host is), and the cookie filter, which does
// nothing on routes that rewrite no cookies. It requires TLS, so that a
// plaintext connection to the HTTPS port matches no chain.
func FallbackFilterChain(secret string) *envoy_config_listener_v3.FilterChain {
	ctx := &envoy_transport_socket_tls_v3.DownstreamTlsContext{
		CommonTlsContext: &envoy_transport_socket_tls_v3.CommonTlsContext{
			TlsParams: &envoy_transport_socket_tls_v3.TlsParameters{
				TlsMinimumProtocolVersion: envoy_transport_socket_tls_v3.TlsParameters_TLSv1_2,
				TlsMaximumProtocolVersion: envoy_transport_socket_tls_v3.TlsParameters_TLSv1_3,
			},
			TlsCertificateSdsSecretConfigs: []*envoy_transport_socket_tls_v3.SdsSecretConfig{sdsSecret(secret)},
			AlpnProtocols:                  []string{"h2", "http/1.1"},
		},
	}
	hcm := httpConnectionManager(HTTPSListenerName, cookieFilter())
	hcm.RouteSpecifier = &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_Rds{
		Rds: &envoy_filter_network_http_connection_manager_v3.Rds{
			ConfigSource:    adsConfigSource(),
			RouteConfigName: FallbackRouteName,
		},
	}
	return &envoy_config_listener_v3.FilterChain{
		Name:             FallbackChainName,
		FilterChainMatch: &envoy_config_listener_v3.FilterChainMatch{TransportProtocol: "tls"},
		TransportSocket:  tlsTransportSocket(ctx),
		Filters:          []*envoy_config_listener_v3.Filter{hcmFilter(hcm)},
	}
}

// usesFallback reports whether a secure host is served to clients without
// SNI. The DAG allows the fallback certificate only on hosts that
// terminate TLS and serve routes with no check of their own (fallback.go
// in internal/dag); the test is repeated here so that no host whose own
// chain would be withheld (see HTTPSFilterChain) is reachable through the
// fallback chain instead.
func usesFallback(svh *dag.SecureVirtualHost) bool {
	return svh != nil && svh.FallbackCertificate != nil && svh.Secret != nil &&
		svh.TCPProxy == nil && !svh.Passthrough && svh.Authorization == nil && svh.JWT == nil && svh.ClientCA == nil && svh.ClientAuth == nil
}

// fallbackSecret is the certificate of the fallback chain, "" when no host
// uses it: every host that does has the same one (the flag's), so the
// first says which.
func fallbackSecret(svhs []*dag.SecureVirtualHost) string {
	for _, svh := range svhs {
		if usesFallback(svh) {
			return svh.FallbackCertificate.Name
		}
	}
	return ""
}

// fallbackVirtualHosts are the virtual hosts of FallbackRouteConfig.
func fallbackVirtualHosts(svhs []*dag.SecureVirtualHost) []*envoy_config_route_v3.VirtualHost {
	var out []*envoy_config_route_v3.VirtualHost
	for _, svh := range svhs {
		if vh := FallbackVirtualHost(svh); vh != nil {
			out = append(out, vh)
		}
	}
	return out
}
