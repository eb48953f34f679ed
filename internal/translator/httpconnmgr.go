package translator

import (
	"slices"

	envoy_config_accesslog_v3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_filter_http_ext_authz_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	// The Router type is registered by this import alone: routerFilter
	// packs its config without making one, and every decoder of the
	// listeners (the gate, render, tests) resolves the Any by this name.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// Names of the Envoy extensions Switchyard configures. A typed_per_filter_config
// key must equal the name of the HTTP filter it configures, so both sides use
// these constants.
const (
	filterHTTPConnectionManager = "envoy.filters.network.http_connection_manager"
	filterTCPProxy              = "envoy.filters.network.tcp_proxy"
	filterRouter                = "envoy.filters.http.router"
	filterExtAuthz              = "envoy.filters.http.ext_authz"
	filterRBAC                  = "envoy.filters.http.rbac"
	filterCORS                  = "envoy.filters.http.cors"
	filterLocalRateLimit        = "envoy.filters.http.local_ratelimit"
	filterRateLimit             = "envoy.filters.http.ratelimit"
	filterJWTAuthn              = "envoy.filters.http.jwt_authn"
	filterTLSInspector          = "envoy.filters.listener.tls_inspector"
	transportSocketTLS          = "envoy.transport_sockets.tls"
	accessLoggerStdout          = "envoy.access_loggers.stdout"
	upgradeWebsocket            = "websocket"
)

// httpConnectionManager returns the HCM settings shared by both listeners;
// the caller sets the route specifier.
//
//   - use_remote_address: Envoy is the edge, so the peer address is the
//     client address and x-forwarded-for is appended, not trusted.
//   - normalize_path and merge_slashes: route matching sees the path the
//     backend will see, so "/a/../admin" or "//admin" cannot slip past a
//     prefix route meant to guard "/admin".
//   - websocket upgrades are listed but disabled: Envoy only honours a
//     per-route upgrade_config for an upgrade type the HCM knows, and the
//     routes that allow websockets enable it one by one.
//   - the traffic policies' filters come first (see policyFilters), then
//     the caller's, then the router, last, which both Envoy and gRPC
//     require.
func httpConnectionManager(statPrefix string, filters ...*envoy_filter_network_http_connection_manager_v3.HttpFilter) *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager {
	return &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{
		StatPrefix:       statPrefix,
		UseRemoteAddress: boolValue(true),
		NormalizePath:    boolValue(true),
		MergeSlashes:     true,
		UpgradeConfigs: []*envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_UpgradeConfig{{
			UpgradeType: upgradeWebsocket,
			Enabled:     boolValue(false),
		}},
		AccessLog:   []*envoy_config_accesslog_v3.AccessLog{stdoutAccessLog()},
		HttpFilters: slices.Concat(policyFilters(), filters, []*envoy_filter_network_http_connection_manager_v3.HttpFilter{routerFilter()}),
	}
}

// hcmFilter wraps an HCM as the network filter of a filter chain.
func hcmFilter(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager) *envoy_config_listener_v3.Filter {
	return &envoy_config_listener_v3.Filter{
		Name:       filterHTTPConnectionManager,
		ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(hcm)},
	}
}

// stdoutAccessLog logs every request in Envoy's default format to stdout,
// where the pod's log collector picks it up.
// Its config is empty, so it is packed as constFilter packs one: its
// messages in one allocation, with the type URL toAny gives
// (TestConstFilters checks).
func stdoutAccessLog() *envoy_config_accesslog_v3.AccessLog {
	b := &struct {
		log    envoy_config_accesslog_v3.AccessLog
		config envoy_config_accesslog_v3.AccessLog_TypedConfig
		any    anypb.Any
	}{}
	b.any.TypeUrl = stdoutAccessLogURL
	b.config.TypedConfig = &b.any
	b.log.Name, b.log.ConfigType = accessLoggerStdout, &b.config
	return &b.log
}

// stdoutAccessLogURL is the type URL toAny gives the stdout logger's
// config.
const stdoutAccessLogURL = "type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog"

// routerFilter is the last HTTP filter of every HCM, with an empty Router
// config.
func routerFilter() *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	return constFilter(filterRouter, routerConfigURL, "")
}

// routerConfigURL is the type URL toAny gives the Router config
// (TestConstFilters checks it).
const routerConfigURL = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"

// constFilter is an HTTP filter whose config never changes, packed as
// toAny packs it: typeURL and the config's encoding, value (the callers'
// constants, which TestConstFilters holds to toAny's). Its messages and
// encoding take one allocation, where packing takes six: every HCM has
// several such filters.
func constFilter(name, typeURL, value string) *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	b := &struct {
		filter envoy_filter_network_http_connection_manager_v3.HttpFilter
		config envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig
		any    anypb.Any
		value  [32]byte
	}{}
	b.any.TypeUrl = typeURL
	if value != "" {
		b.any.Value = b.value[:copy(b.value[:], value)]
		if len(value) > len(b.value) {
			b.any.Value = []byte(value)
		}
	}
	b.config.TypedConfig = &b.any
	b.filter.Name, b.filter.ConfigType = name, &b.config
	return &b.filter
}

// extAuthzFilter checks every request of a secure virtual host with the
// authorization service before it is routed. The virtual host's context and
// the routes' overrides travel as typed_per_filter_config in the route
// configuration (see extAuthzPerRoute), so the filter itself carries only
// what is the same for every route.
//
// The DAG always sets a positive ResponseTimeout (2s unless configured);
// a zero one leaves Envoy's default (200ms) rather than sending 0.
//
// The calls' :authority is Envoy's default, the cluster name, unless the
// ExtensionService verifies a subject name: then it is that name, the one
// the SNI and the server's certificate carry, as a TLS server expects.
func extAuthzFilter(auth *dag.Authorization) *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	target := &envoy_config_core_v3.GrpcService_EnvoyGrpc{ClusterName: auth.Cluster.Name}
	if t := auth.Cluster.Spec.UpstreamTLS; t != nil {
		target.Authority = t.SubjectName
	}
	grpc := &envoy_config_core_v3.GrpcService{
		TargetSpecifier: &envoy_config_core_v3.GrpcService_EnvoyGrpc_{EnvoyGrpc: target},
	}
	if auth.ResponseTimeout > 0 {
		grpc.Timeout = duration(auth.ResponseTimeout)
	}
	cfg := &envoy_filter_http_ext_authz_v3.ExtAuthz{
		Services:            &envoy_filter_http_ext_authz_v3.ExtAuthz_GrpcService{GrpcService: grpc},
		TransportApiVersion: envoy_config_core_v3.ApiVersion_V3,
		FailureModeAllow:    auth.FailOpen,
	}
	if b := auth.WithRequestBody; b != nil {
		cfg.WithRequestBody = &envoy_filter_http_ext_authz_v3.BufferSettings{
			MaxRequestBytes:     b.MaxRequestBytes,
			AllowPartialMessage: b.AllowPartialMessage,
			PackAsBytes:         b.PackAsBytes,
		}
	}
	return &envoy_filter_network_http_connection_manager_v3.HttpFilter{
		Name: filterExtAuthz,
		ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{
			TypedConfig: toAny(cfg),
		},
	}
}
