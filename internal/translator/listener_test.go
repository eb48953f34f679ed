package translator

import (
	"slices"
	"testing"
	"time"

	envoy_config_accesslog_v3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_access_logger_stream_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	envoy_filter_http_cors_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	envoy_filter_http_ext_authz_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	envoy_filter_http_local_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	envoy_filter_http_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	envoy_filter_http_router_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	envoy_filter_listener_tls_inspector_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_filter_network_tcp_proxy_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

func ads() *envoy_config_core_v3.ConfigSource {
	return &envoy_config_core_v3.ConfigSource{
		ResourceApiVersion:    envoy_config_core_v3.ApiVersion_V3,
		ConfigSourceSpecifier: &envoy_config_core_v3.ConfigSource_Ads{Ads: &envoy_config_core_v3.AggregatedConfigSource{}},
	}
}

// wantPolicyFilters are the traffic-policy filters every HCM starts with,
// all without rules of their own.
func wantPolicyFilters() []*envoy_filter_network_http_connection_manager_v3.HttpFilter {
	return []*envoy_filter_network_http_connection_manager_v3.HttpFilter{{
		Name:       "envoy.filters.http.rbac",
		ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: toAny(&envoy_filter_http_rbac_v3.RBAC{})},
	}, {
		Name:       "envoy.filters.http.local_ratelimit",
		ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: toAny(&envoy_filter_http_local_ratelimit_v3.LocalRateLimit{StatPrefix: "vhost_rate_limit"})},
	}, {
		Name:       "envoy.filters.http.cors",
		ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: toAny(&envoy_filter_http_cors_v3.Cors{})},
	}}
}

// wantHCM spells out the HCM settings both listeners share, so that a
// change to any of them shows up in this file's diffs.
func wantHCM(statPrefix string, filters ...*envoy_filter_network_http_connection_manager_v3.HttpFilter) *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager {
	router := &envoy_filter_network_http_connection_manager_v3.HttpFilter{
		Name:       "envoy.filters.http.router",
		ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: toAny(&envoy_filter_http_router_v3.Router{})},
	}
	return &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{
		StatPrefix:       statPrefix,
		UseRemoteAddress: wrapperspb.Bool(true),
		NormalizePath:    wrapperspb.Bool(true),
		MergeSlashes:     true,
		UpgradeConfigs: []*envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_UpgradeConfig{
			{UpgradeType: "websocket", Enabled: wrapperspb.Bool(false)},
		},
		AccessLog: []*envoy_config_accesslog_v3.AccessLog{{
			Name:       "envoy.access_loggers.stdout",
			ConfigType: &envoy_config_accesslog_v3.AccessLog_TypedConfig{TypedConfig: toAny(&envoy_access_logger_stream_v3.StdoutAccessLog{})},
		}},
		HttpFilters: slices.Concat(wantPolicyFilters(), filters, []*envoy_filter_network_http_connection_manager_v3.HttpFilter{router}),
	}
}

func TestHTTPListener(t *testing.T) {
	// The Lua filter's behaviour is TestHostScopeScript's.
	hcm := wantHCM("ingress_http", hostScopeFilter([]string{"a.example.com"}), cookieFilter())
	hcm.RouteSpecifier = &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_ScopedRoutes{
		ScopedRoutes: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes{
			Name: "ingress_http",
			ScopeKeyBuilder: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder{
				Fragments: []*envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder{{
					Type: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor_{
						HeaderValueExtractor: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor{
							Name: "x-switchyard-host-scope",
						},
					},
				}},
			},
			RdsConfigSource: ads(),
			ConfigSpecifier: &envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopedRds{
				ScopedRds: &envoy_filter_network_http_connection_manager_v3.ScopedRds{ScopedRdsConfigSource: ads()},
			},
		},
	}
	want := &envoy_config_listener_v3.Listener{
		Name:    "ingress_http",
		Address: socketAddress("127.0.0.1", 80),
		FilterChains: []*envoy_config_listener_v3.FilterChain{{
			Filters: []*envoy_config_listener_v3.Filter{{
				Name:       "envoy.filters.network.http_connection_manager",
				ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(hcm)},
			}},
		}},
	}
	opts := DefaultOptions()
	opts.ListenAddress, opts.HTTPPort = "127.0.0.1", 80
	got := HTTPListener(opts, []string{"a.example.com"}, nil)
	if d := diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	validateAll(t, &Resources{Listeners: []*envoy_config_listener_v3.Listener{got}})
}

func TestHTTPSListener(t *testing.T) {
	cert := &dag.Secret{Name: "ns/cert"}
	ca := &dag.Secret{Name: "ns/ca/ca", Kind: dag.SecretCA}
	upstream := testCluster("backend")
	authz := testCluster("authz")
	svh := func(fqdn string) *dag.SecureVirtualHost {
		return &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: fqdn}, Secret: cert}
	}
	tls := func(minVersion, maxVersion envoy_transport_socket_tls_v3.TlsParameters_TlsProtocol, alpn []string) *envoy_transport_socket_tls_v3.DownstreamTlsContext {
		return &envoy_transport_socket_tls_v3.DownstreamTlsContext{
			CommonTlsContext: &envoy_transport_socket_tls_v3.CommonTlsContext{
				TlsParams: &envoy_transport_socket_tls_v3.TlsParameters{TlsMinimumProtocolVersion: minVersion, TlsMaximumProtocolVersion: maxVersion},
				TlsCertificateSdsSecretConfigs: []*envoy_transport_socket_tls_v3.SdsSecretConfig{
					{Name: "ns/cert", SdsConfig: ads()},
				},
				AlpnProtocols: alpn,
			},
		}
	}
	socket := func(ctx *envoy_transport_socket_tls_v3.DownstreamTlsContext) *envoy_config_core_v3.TransportSocket {
		return &envoy_config_core_v3.TransportSocket{
			Name:       "envoy.transport_sockets.tls",
			ConfigType: &envoy_config_core_v3.TransportSocket_TypedConfig{TypedConfig: toAny(ctx)},
		}
	}
	rds := func(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager, fqdn string) *envoy_config_listener_v3.Filter {
		hcm.RouteSpecifier = &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_Rds{
			Rds: &envoy_filter_network_http_connection_manager_v3.Rds{ConfigSource: ads(), RouteConfigName: "https/" + fqdn},
		}
		return &envoy_config_listener_v3.Filter{
			Name:       "envoy.filters.network.http_connection_manager",
			ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(hcm)},
		}
	}
	tcpProxy := &envoy_config_listener_v3.Filter{
		Name: "envoy.filters.network.tcp_proxy",
		ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(&envoy_filter_network_tcp_proxy_v3.TcpProxy{
			StatPrefix:       "ingress_https",
			ClusterSpecifier: &envoy_filter_network_tcp_proxy_v3.TcpProxy_Cluster{Cluster: "backend"},
		})},
	}
	match := func(fqdn, transport string) *envoy_config_listener_v3.FilterChainMatch {
		return &envoy_config_listener_v3.FilterChainMatch{ServerNames: []string{fqdn}, TransportProtocol: transport}
	}

	tests := map[string]struct {
		in   *dag.SecureVirtualHost
		want *envoy_config_listener_v3.FilterChain // nil: no filter chain
	}{
		"terminated with default TLS versions": {
			in: svh("a.com"),
			want: &envoy_config_listener_v3.FilterChain{
				Name:             "a.com",
				FilterChainMatch: match("a.com", ""),
				TransportSocket:  socket(tls(envoy_transport_socket_tls_v3.TlsParameters_TLSv1_2, envoy_transport_socket_tls_v3.TlsParameters_TLSv1_3, []string{"h2", "http/1.1"})),
				Filters:          []*envoy_config_listener_v3.Filter{rds(wantHCM("ingress_https"), "a.com")},
			},
		},
		"TLS 1.3 only, client certificates required": {
			in: func() *dag.SecureVirtualHost {
				v := svh("a.com")
				v.MinTLSVersion, v.MaxTLSVersion, v.ClientCA = "1.3", "1.3", ca
				return v
			}(),
			want: &envoy_config_listener_v3.FilterChain{
				Name:             "a.com",
				FilterChainMatch: match("a.com", ""),
				TransportSocket: socket(func() *envoy_transport_socket_tls_v3.DownstreamTlsContext {
					ctx := tls(envoy_transport_socket_tls_v3.TlsParameters_TLSv1_3, envoy_transport_socket_tls_v3.TlsParameters_TLSv1_3, []string{"h2", "http/1.1"})
					ctx.CommonTlsContext.ValidationContextType = &envoy_transport_socket_tls_v3.CommonTlsContext_ValidationContextSdsSecretConfig{
						ValidationContextSdsSecretConfig: &envoy_transport_socket_tls_v3.SdsSecretConfig{Name: "ns/ca/ca", SdsConfig: ads()},
					}
					ctx.RequireClientCertificate = wrapperspb.Bool(true)
					return ctx
				}()),
				Filters: []*envoy_config_listener_v3.Filter{rds(wantHCM("ingress_https"), "a.com")},
			},
		},
		"authorization: ext_authz before the router": {
			in: func() *dag.SecureVirtualHost {
				v := svh("a.com")
				v.Authorization = &dag.Authorization{
					Cluster: authz, ResponseTimeout: 300 * time.Millisecond, FailOpen: true,
					WithRequestBody: &dag.AuthorizationBody{MaxRequestBytes: 4096, AllowPartialMessage: true, PackAsBytes: true},
				}
				return v
			}(),
			want: &envoy_config_listener_v3.FilterChain{
				Name:             "a.com",
				FilterChainMatch: match("a.com", ""),
				TransportSocket:  socket(tls(envoy_transport_socket_tls_v3.TlsParameters_TLSv1_2, envoy_transport_socket_tls_v3.TlsParameters_TLSv1_3, []string{"h2", "http/1.1"})),
				Filters: []*envoy_config_listener_v3.Filter{rds(wantHCM("ingress_https", &envoy_filter_network_http_connection_manager_v3.HttpFilter{
					Name: "envoy.filters.http.ext_authz",
					ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: toAny(&envoy_filter_http_ext_authz_v3.ExtAuthz{
						Services: &envoy_filter_http_ext_authz_v3.ExtAuthz_GrpcService{GrpcService: &envoy_config_core_v3.GrpcService{
							TargetSpecifier: &envoy_config_core_v3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &envoy_config_core_v3.GrpcService_EnvoyGrpc{ClusterName: "authz"}},
							Timeout:         durationpb.New(300 * time.Millisecond),
						}},
						TransportApiVersion: envoy_config_core_v3.ApiVersion_V3,
						FailureModeAllow:    true,
						WithRequestBody:     &envoy_filter_http_ext_authz_v3.BufferSettings{MaxRequestBytes: 4096, AllowPartialMessage: true, PackAsBytes: true},
					})},
				}), "a.com")},
			},
		},
		"tcp proxy with TLS terminated": {
			in: func() *dag.SecureVirtualHost {
				v := svh("a.com")
				v.TCPProxy = &dag.TCPProxy{Cluster: upstream}
				return v
			}(),
			want: &envoy_config_listener_v3.FilterChain{
				Name:             "a.com",
				FilterChainMatch: match("a.com", ""),
				TransportSocket:  socket(tls(envoy_transport_socket_tls_v3.TlsParameters_TLSv1_2, envoy_transport_socket_tls_v3.TlsParameters_TLSv1_3, nil)),
				Filters:          []*envoy_config_listener_v3.Filter{tcpProxy},
			},
		},
		"passthrough: matches TLS only, no transport socket": {
			in: &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: "a.com"}, Passthrough: true, TCPProxy: &dag.TCPProxy{Cluster: upstream}},
			want: &envoy_config_listener_v3.FilterChain{
				Name:             "a.com",
				FilterChainMatch: match("a.com", "tls"),
				Filters:          []*envoy_config_listener_v3.Filter{tcpProxy},
			},
		},
		"no certificate: not served": {
			in: &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: "a.com"}},
		},
		"authorization without a cluster: not served rather than unchecked": {
			in: func() *dag.SecureVirtualHost {
				v := svh("a.com")
				v.Authorization = &dag.Authorization{}
				return v
			}(),
		},
		"passthrough without a cluster: not served": {
			in: &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: "a.com"}, Passthrough: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := HTTPSListener([]*dag.SecureVirtualHost{tc.in}, DefaultOptions())
			if tc.want == nil {
				if got != nil {
					t.Fatalf("want no listener, got %v", got)
				}
				return
			}
			want := &envoy_config_listener_v3.Listener{
				Name:    "ingress_https",
				Address: socketAddress("0.0.0.0", 8443),
				ListenerFilters: []*envoy_config_listener_v3.ListenerFilter{{
					Name:       "envoy.filters.listener.tls_inspector",
					ConfigType: &envoy_config_listener_v3.ListenerFilter_TypedConfig{TypedConfig: toAny(&envoy_filter_listener_tls_inspector_v3.TlsInspector{})},
				}},
				FilterChains: []*envoy_config_listener_v3.FilterChain{tc.want},
			}
			if d := diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			validateAll(t, &Resources{Listeners: []*envoy_config_listener_v3.Listener{got}})
		})
	}
}

// TestHTTPSListenerChainOrder: filter chains follow FQDN order whatever
// order the hosts come in, and hosts that cannot be served are skipped
// without affecting the others.
func TestHTTPSListenerChainOrder(t *testing.T) {
	cert := &dag.Secret{Name: "ns/cert"}
	in := []*dag.SecureVirtualHost{
		{VirtualHost: dag.VirtualHost{FQDN: "c.com"}, Secret: cert},
		{VirtualHost: dag.VirtualHost{FQDN: "b.com"}}, // no certificate
		nil,
		{VirtualHost: dag.VirtualHost{FQDN: "a.com"}, Secret: cert},
	}
	got := HTTPSListener(in, DefaultOptions())
	var names []string
	for _, fc := range got.GetFilterChains() {
		names = append(names, fc.GetName())
	}
	if d := diff([]string{"a.com", "c.com"}, names); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if HTTPSListener(nil, DefaultOptions()) != nil {
		t.Error("want no HTTPS listener without secure virtual hosts")
	}
}
