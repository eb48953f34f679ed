package translator

import (
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_upstream_http_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// httpProtocolOptionsKey is the typed_extension_protocol_options key Envoy
// looks up upstream HTTP settings under.
const httpProtocolOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// Health-check defaults for fields the DAG leaves at zero; Envoy requires
// every one of them.
const (
	defaultHealthCheckInterval = 5 * time.Second
	defaultHealthCheckTimeout  = 2 * time.Second
	defaultUnhealthyThreshold  = 3
	defaultHealthyThreshold    = 2
)

// Cluster returns the CDS resource of a DAG cluster.
//
// Endpoints come over EDS, with the cluster's own name as the
// service name, so that an endpoint change pushes one ClusterLoadAssignment
// and never the cluster (site/architecture.md, decision 4). locality_weighted_lb_config
// is always set: the services of a route are localities of one cluster and
// their weights are locality weights, which Envoy ignores without it
// (decision 2). The one exception is the cluster of an ExternalName
// Service, which Envoy resolves by DNS (see externalNameCluster).
func Cluster(c *dag.Cluster, opts Options) *envoy_config_cluster_v3.Cluster {
	out := clusterWithoutTLS(c, opts)
	if c.Spec.Protocol == "tls" || c.Spec.Protocol == "h2" {
		out.TransportSocket = upstreamTLSSocket(&c.Spec)
	}
	return out
}

// clusterWithoutTLS is Cluster without its transport socket, which the
// gRPC group leaves out (see GRPCCluster): the EDS cluster and the
// settings of the connections to the backends.
func clusterWithoutTLS(c *dag.Cluster, opts Options) *envoy_config_cluster_v3.Cluster {
	spec := &c.Spec
	var out *envoy_config_cluster_v3.Cluster
	if ServesEndpoints(spec) {
		out = edsCluster(c.Name, spec)
	} else {
		out = externalNameCluster(c.Name, spec, envoy_config_cluster_v3.Cluster_STRICT_DNS, opts)
	}
	out.HealthChecks = healthChecks(spec)
	out.CircuitBreakers = circuitBreakers(spec.CircuitBreakers)
	switch rr, lr := slowStartLbConfig(spec); {
	case rr != nil:
		out.LbConfig = rr
	case lr != nil:
		out.LbConfig = lr
	}
	if opts.ConnectTimeout > 0 {
		out.ConnectTimeout = duration(opts.ConnectTimeout)
	}
	if po := httpProtocolOptions(spec); po != nil {
		out.TypedExtensionProtocolOptions = map[string]*anypb.Any{httpProtocolOptionsKey: toAny(po)}
	}
	return out
}

// edsCluster returns the part of a cluster every group serves: its name,
// EDS over ADS with the name as service name, and the load balancing of
// spec. It is the whole of a DNS name's cluster (DNSCluster), which opens
// no connection and so has no connection settings.
func edsCluster(name string, spec *dag.ClusterSpec) *envoy_config_cluster_v3.Cluster {
	// The messages every cluster has, in one allocation.
	b := &struct {
		cluster  envoy_config_cluster_v3.Cluster
		typ      envoy_config_cluster_v3.Cluster_Type
		eds      envoy_config_cluster_v3.Cluster_EdsClusterConfig
		common   envoy_config_cluster_v3.Cluster_CommonLbConfig
		locality envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig_
		weighted envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig
		panic    envoy_type_v3.Percent
	}{}
	b.typ.Type = envoy_config_cluster_v3.Cluster_EDS
	b.eds.EdsConfig, b.eds.ServiceName = adsConfigSource(), name
	b.locality.LocalityWeightedLbConfig = &b.weighted
	b.common.LocalityConfigSpecifier = &b.locality
	// Panic mode (by default below 50 % healthy hosts) would spread
	// requests over unhealthy and draining endpoints. The endpoints served
	// are those Kubernetes reports ready, so when a Service loses most of
	// them the rest must take the traffic, and a standby priority must
	// take over, never a draining endpoint.
	b.common.HealthyPanicThreshold = &b.panic
	out := &b.cluster
	out.Name = name
	out.ClusterDiscoveryType = &b.typ
	out.EdsClusterConfig = &b.eds
	out.LbPolicy = lbPolicy(spec.LoadBalancer)
	out.CommonLbConfig = &b.common
	return out
}

// lbPolicy maps the DAG strategy. Cookie and RequestHash both hash; what
// they hash on is the route's hash_policy.
func lbPolicy(lb string) envoy_config_cluster_v3.Cluster_LbPolicy {
	switch lb {
	case dag.LBRandom:
		return envoy_config_cluster_v3.Cluster_RANDOM
	case dag.LBWeightedLeastRequest:
		return envoy_config_cluster_v3.Cluster_LEAST_REQUEST
	case dag.LBCookie, dag.LBRequestHash:
		return envoy_config_cluster_v3.Cluster_RING_HASH
	default:
		return envoy_config_cluster_v3.Cluster_ROUND_ROBIN
	}
}

// isHTTP2 reports whether the backends speak HTTP/2, with or without TLS.
func isHTTP2(protocol string) bool { return protocol == "h2" || protocol == "h2c" }

// httpProtocolOptions returns the upstream HTTP options, or nil when
// Envoy's defaults (HTTP/1.1, no idle timeout) apply. HTTP/2 must be asked
// for explicitly: Envoy does not negotiate it upstream on its own. The
// cluster-level idle timeout lives here too; the Cluster field of the same
// name is deprecated.
func httpProtocolOptions(spec *dag.ClusterSpec) *envoy_upstream_http_v3.HttpProtocolOptions {
	if !isHTTP2(spec.Protocol) && spec.IdleConnectionTimeout == nil {
		return nil
	}
	explicit := &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig{
		ProtocolConfig: &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{
			HttpProtocolOptions: &envoy_config_core_v3.Http1ProtocolOptions{},
		},
	}
	if isHTTP2(spec.Protocol) {
		explicit.ProtocolConfig = &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
			Http2ProtocolOptions: &envoy_config_core_v3.Http2ProtocolOptions{},
		}
	}
	po := &envoy_upstream_http_v3.HttpProtocolOptions{
		UpstreamProtocolOptions: &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: explicit},
	}
	if d := spec.IdleConnectionTimeout; d != nil {
		po.CommonHttpProtocolOptions = &envoy_config_core_v3.HttpProtocolOptions{IdleTimeout: duration(*d)}
	}
	return po
}

// healthChecks maps the active health check: HTTP when a path is set, TCP
// connect otherwise. HTTP/2 backends are checked over HTTP/2, since an
// h2c-only server does not answer HTTP/1.1.
func healthChecks(spec *dag.ClusterSpec) []*envoy_config_core_v3.HealthCheck {
	hc := spec.HealthCheck
	if hc == nil {
		return nil
	}
	out := &envoy_config_core_v3.HealthCheck{
		Timeout:            duration(orDefault(hc.Timeout, defaultHealthCheckTimeout)),
		Interval:           duration(orDefault(hc.Interval, defaultHealthCheckInterval)),
		UnhealthyThreshold: u32(orDefault(hc.UnhealthyThreshold, defaultUnhealthyThreshold)),
		HealthyThreshold:   u32(orDefault(hc.HealthyThreshold, defaultHealthyThreshold)),
	}
	if hc.Path != "" {
		h := &envoy_config_core_v3.HealthCheck_HttpHealthCheck{Path: hc.Path, Host: hc.Host, ExpectedStatuses: expectedStatuses(hc.ExpectedStatuses)}
		if isHTTP2(spec.Protocol) {
			h.CodecClientType = envoy_type_v3.CodecClientType_HTTP2
		}
		out.HealthChecker = &envoy_config_core_v3.HealthCheck_HttpHealthCheck_{HttpHealthCheck: h}
	} else {
		out.HealthChecker = &envoy_config_core_v3.HealthCheck_TcpHealthCheck_{
			TcpHealthCheck: &envoy_config_core_v3.HealthCheck_TcpHealthCheck{},
		}
	}
	return []*envoy_config_core_v3.HealthCheck{out}
}

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// circuitBreakers maps the DEFAULT-priority thresholds. Zero fields stay
// unset so Envoy's defaults (1024) apply; MaxRetriesSet tells an explicit
// "no retries" from unset.
func circuitBreakers(cb *dag.CircuitBreakers) *envoy_config_cluster_v3.CircuitBreakers {
	if cb == nil {
		return nil
	}
	t := &envoy_config_cluster_v3.CircuitBreakers_Thresholds{Priority: envoy_config_core_v3.RoutingPriority_DEFAULT}
	if cb.MaxConnections > 0 {
		t.MaxConnections = u32(cb.MaxConnections)
	}
	if cb.MaxPendingRequests > 0 {
		t.MaxPendingRequests = u32(cb.MaxPendingRequests)
	}
	if cb.MaxRequests > 0 {
		t.MaxRequests = u32(cb.MaxRequests)
	}
	if cb.MaxRetries > 0 || cb.MaxRetriesSet {
		t.MaxRetries = u32(cb.MaxRetries)
	}
	out := &envoy_config_cluster_v3.CircuitBreakers{
		Thresholds: []*envoy_config_cluster_v3.CircuitBreakers_Thresholds{t},
	}
	if cb.PerHostMaxConnections > 0 {
		// Envoy reads only max_connections of a per-host threshold.
		out.PerHostThresholds = []*envoy_config_cluster_v3.CircuitBreakers_Thresholds{{
			Priority:       envoy_config_core_v3.RoutingPriority_DEFAULT,
			MaxConnections: u32(cb.PerHostMaxConnections),
		}}
	}
	return out
}
