package translator

import (
	"testing"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	envoy_upstream_http_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// wantCluster is the cluster every spec starts from: EDS over ADS under its
// own name, round robin, locality weights honoured.
func wantCluster(mod func(*envoy_config_cluster_v3.Cluster)) *envoy_config_cluster_v3.Cluster {
	c := &envoy_config_cluster_v3.Cluster{
		Name:                 "c",
		ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_EDS},
		EdsClusterConfig:     &envoy_config_cluster_v3.Cluster_EdsClusterConfig{EdsConfig: ads(), ServiceName: "c"},
		ConnectTimeout:       durationpb.New(2 * time.Second),
		CommonLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig{
			LocalityConfigSpecifier: &envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig_{
				LocalityWeightedLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig{},
			},
			HealthyPanicThreshold: &envoy_type_v3.Percent{},
		},
	}
	if mod != nil {
		mod(c)
	}
	return c
}

func protocolOptions(http2 bool, idle *time.Duration) map[string]*anypb.Any {
	explicit := &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig{
		ProtocolConfig: &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{HttpProtocolOptions: &envoy_config_core_v3.Http1ProtocolOptions{}},
	}
	if http2 {
		explicit.ProtocolConfig = &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &envoy_config_core_v3.Http2ProtocolOptions{}}
	}
	po := &envoy_upstream_http_v3.HttpProtocolOptions{
		UpstreamProtocolOptions: &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: explicit},
	}
	if idle != nil {
		po.CommonHttpProtocolOptions = &envoy_config_core_v3.HttpProtocolOptions{IdleTimeout: durationpb.New(*idle)}
	}
	return map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": toAny(po)}
}

func upstreamTLS(ctx *envoy_transport_socket_tls_v3.UpstreamTlsContext) *envoy_config_core_v3.TransportSocket {
	return &envoy_config_core_v3.TransportSocket{
		Name:       "envoy.transport_sockets.tls",
		ConfigType: &envoy_config_core_v3.TransportSocket_TypedConfig{TypedConfig: toAny(ctx)},
	}
}

func dnsSAN(name string) []*envoy_transport_socket_tls_v3.SubjectAltNameMatcher {
	return []*envoy_transport_socket_tls_v3.SubjectAltNameMatcher{{
		SanType: envoy_transport_socket_tls_v3.SubjectAltNameMatcher_DNS,
		Matcher: &envoy_type_matcher_v3.StringMatcher{MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: name}},
	}}
}

func TestCluster(t *testing.T) {
	tests := map[string]struct {
		spec dag.ClusterSpec
		want *envoy_config_cluster_v3.Cluster
	}{
		"defaults": {
			want: wantCluster(nil),
		},
		"round robin": {
			spec: dag.ClusterSpec{LoadBalancer: dag.LBRoundRobin},
			want: wantCluster(nil),
		},
		"random": {
			spec: dag.ClusterSpec{LoadBalancer: dag.LBRandom},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) { c.LbPolicy = envoy_config_cluster_v3.Cluster_RANDOM }),
		},
		"weighted least request": {
			spec: dag.ClusterSpec{LoadBalancer: dag.LBWeightedLeastRequest},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) { c.LbPolicy = envoy_config_cluster_v3.Cluster_LEAST_REQUEST }),
		},
		"cookie": {
			spec: dag.ClusterSpec{LoadBalancer: dag.LBCookie},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) { c.LbPolicy = envoy_config_cluster_v3.Cluster_RING_HASH }),
		},
		"request hash": {
			spec: dag.ClusterSpec{LoadBalancer: dag.LBRequestHash},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) { c.LbPolicy = envoy_config_cluster_v3.Cluster_RING_HASH }),
		},
		"h2c: explicit HTTP/2, no TLS": {
			spec: dag.ClusterSpec{Protocol: "h2c"},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) { c.TypedExtensionProtocolOptions = protocolOptions(true, nil) }),
		},
		"h2 with verification: CA over SDS plus SAN in a combined context": {
			spec: dag.ClusterSpec{Protocol: "h2", UpstreamTLS: &dag.UpstreamTLS{CASecret: "ns/ca/ca", SubjectName: "backend.ns.svc"}},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) {
				c.TypedExtensionProtocolOptions = protocolOptions(true, nil)
				c.TransportSocket = upstreamTLS(&envoy_transport_socket_tls_v3.UpstreamTlsContext{
					Sni: "backend.ns.svc",
					CommonTlsContext: &envoy_transport_socket_tls_v3.CommonTlsContext{
						AlpnProtocols: []string{"h2"},
						ValidationContextType: &envoy_transport_socket_tls_v3.CommonTlsContext_CombinedValidationContext{
							CombinedValidationContext: &envoy_transport_socket_tls_v3.CommonTlsContext_CombinedCertificateValidationContext{
								DefaultValidationContext:         &envoy_transport_socket_tls_v3.CertificateValidationContext{MatchTypedSubjectAltNames: dnsSAN("backend.ns.svc")},
								ValidationContextSdsSecretConfig: &envoy_transport_socket_tls_v3.SdsSecretConfig{Name: "ns/ca/ca", SdsConfig: ads()},
							},
						},
					},
				})
			}),
		},
		"tls without verification": {
			spec: dag.ClusterSpec{Protocol: "tls"},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) {
				c.TransportSocket = upstreamTLS(&envoy_transport_socket_tls_v3.UpstreamTlsContext{
					CommonTlsContext: &envoy_transport_socket_tls_v3.CommonTlsContext{},
				})
			}),
		},
		"tls with a subject name but no CA": {
			spec: dag.ClusterSpec{Protocol: "tls", UpstreamTLS: &dag.UpstreamTLS{SubjectName: "b"}},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) {
				c.TransportSocket = upstreamTLS(&envoy_transport_socket_tls_v3.UpstreamTlsContext{
					Sni: "b",
					CommonTlsContext: &envoy_transport_socket_tls_v3.CommonTlsContext{
						ValidationContextType: &envoy_transport_socket_tls_v3.CommonTlsContext_ValidationContext{
							ValidationContext: &envoy_transport_socket_tls_v3.CertificateValidationContext{MatchTypedSubjectAltNames: dnsSAN("b")},
						},
					},
				})
			}),
		},
		"UpstreamTLS is ignored without a TLS protocol": {
			spec: dag.ClusterSpec{UpstreamTLS: &dag.UpstreamTLS{CASecret: "ns/ca/ca"}},
			want: wantCluster(nil),
		},
		"idle connection timeout over HTTP/1.1": {
			spec: dag.ClusterSpec{IdleConnectionTimeout: dur(time.Minute)},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) {
				c.TypedExtensionProtocolOptions = protocolOptions(false, dur(time.Minute))
			}),
		},
		"HTTP health check over HTTP/2": {
			spec: dag.ClusterSpec{Protocol: "h2c", HealthCheck: &dag.HealthCheck{
				Path: "/healthz", Host: "hc", Interval: 10 * time.Second, Timeout: time.Second, UnhealthyThreshold: 5, HealthyThreshold: 1,
			}},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) {
				c.TypedExtensionProtocolOptions = protocolOptions(true, nil)
				c.HealthChecks = []*envoy_config_core_v3.HealthCheck{{
					Timeout: durationpb.New(time.Second), Interval: durationpb.New(10 * time.Second),
					UnhealthyThreshold: wrapperspb.UInt32(5), HealthyThreshold: wrapperspb.UInt32(1),
					HealthChecker: &envoy_config_core_v3.HealthCheck_HttpHealthCheck_{HttpHealthCheck: &envoy_config_core_v3.HealthCheck_HttpHealthCheck{
						Path: "/healthz", Host: "hc", CodecClientType: envoy_type_v3.CodecClientType_HTTP2,
					}},
				}}
			}),
		},
		"TCP health check with defaults": {
			spec: dag.ClusterSpec{HealthCheck: &dag.HealthCheck{}},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) {
				c.HealthChecks = []*envoy_config_core_v3.HealthCheck{{
					Timeout: durationpb.New(2 * time.Second), Interval: durationpb.New(5 * time.Second),
					UnhealthyThreshold: wrapperspb.UInt32(3), HealthyThreshold: wrapperspb.UInt32(2),
					HealthChecker: &envoy_config_core_v3.HealthCheck_TcpHealthCheck_{TcpHealthCheck: &envoy_config_core_v3.HealthCheck_TcpHealthCheck{}},
				}}
			}),
		},
		"circuit breakers: zero stays unset, explicit zero retries is kept": {
			spec: dag.ClusterSpec{CircuitBreakers: &dag.CircuitBreakers{MaxConnections: 100, MaxRequests: 200, MaxRetriesSet: true}},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) {
				c.CircuitBreakers = &envoy_config_cluster_v3.CircuitBreakers{Thresholds: []*envoy_config_cluster_v3.CircuitBreakers_Thresholds{{
					MaxConnections: wrapperspb.UInt32(100), MaxRequests: wrapperspb.UInt32(200), MaxRetries: wrapperspb.UInt32(0),
				}}}
			}),
		},
		"circuit breakers: all set": {
			spec: dag.ClusterSpec{CircuitBreakers: &dag.CircuitBreakers{MaxConnections: 1, MaxPendingRequests: 2, MaxRequests: 3, MaxRetries: 4}},
			want: wantCluster(func(c *envoy_config_cluster_v3.Cluster) {
				c.CircuitBreakers = &envoy_config_cluster_v3.CircuitBreakers{Thresholds: []*envoy_config_cluster_v3.CircuitBreakers_Thresholds{{
					MaxConnections: wrapperspb.UInt32(1), MaxPendingRequests: wrapperspb.UInt32(2), MaxRequests: wrapperspb.UInt32(3), MaxRetries: wrapperspb.UInt32(4),
				}}}
			}),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Cluster(&dag.Cluster{Name: "c", Spec: tc.spec}, DefaultOptions())
			if d := diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			validateAll(t, &Resources{Clusters: []*envoy_config_cluster_v3.Cluster{got}})
		})
	}
}

func TestClusterWithoutConnectTimeout(t *testing.T) {
	got := Cluster(testCluster("c"), Options{})
	if got.GetConnectTimeout() != nil {
		t.Errorf("connect_timeout = %v, want unset (Envoy's default)", got.GetConnectTimeout())
	}
	validateAll(t, &Resources{Clusters: []*envoy_config_cluster_v3.Cluster{got}})
}
