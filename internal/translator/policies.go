package translator

import (
	"maps"

	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// policyFilters are the HTTP filters of the traffic policies, in every
// HCM of the envoy group and configured only per virtual host and per
// route. The RBAC filter comes first, so that a denied source costs
// nothing further, not even a token; the local rate limit next, so that
// preflights count too; CORS before any authentication the caller adds,
// since browsers send preflights without credentials.
func policyFilters() []*envoy_filter_network_http_connection_manager_v3.HttpFilter {
	return []*envoy_filter_network_http_connection_manager_v3.HttpFilter{rbacFilter(), localRateLimitFilter(), corsFilter()}
}

// hostPolicyConfigs returns the typed_per_filter_config entries of a
// virtual host's policies, nil when it has none.
func hostPolicyConfigs(vh *dag.VirtualHost) map[string]*anypb.Any {
	var out map[string]*anypb.Any
	if vh.IPFilter != nil {
		out = withConfig(out, filterRBAC, ipFilterConfig(vh.IPFilter))
	}
	if vh.CORS != nil {
		out = withConfig(out, filterCORS, corsConfig(vh.CORS))
	}
	if vh.RateLimit != nil {
		out = withConfig(out, filterLocalRateLimit, localRateLimitConfig(vh.RateLimit))
	}
	return out
}

// routePolicyConfigs adds a route's own policies to its
// typed_per_filter_config, m, which may be nil.
func routePolicyConfigs(r *dag.Route, m map[string]*anypb.Any) map[string]*anypb.Any {
	if r.IPFilter != nil {
		m = withConfig(m, filterRBAC, ipFilterConfig(r.IPFilter))
	}
	if r.RateLimit != nil {
		m = withConfig(m, filterLocalRateLimit, localRateLimitConfig(r.RateLimit))
	}
	if r.GlobalRateLimitDisabled {
		m = withConfig(m, filterRateLimit, ignoreHostRateLimits())
	}
	if r.JWTVerified {
		m = withConfig(m, filterJWTAuthn, jwtPerRoute(r))
	}
	return m
}

// httpFilter is an HTTP filter of the HCM with its typed config.
func httpFilter(name string, cfg proto.Message) *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	return &envoy_filter_network_http_connection_manager_v3.HttpFilter{
		Name:       name,
		ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: toAny(cfg)},
	}
}

func withConfig(m map[string]*anypb.Any, filter string, cfg *anypb.Any) map[string]*anypb.Any {
	if m == nil {
		m = map[string]*anypb.Any{}
	}
	m[filter] = cfg
	return m
}

// mergeConfigs returns the entries of a and b, b winning; nil when both
// are empty.
func mergeConfigs(a, b map[string]*anypb.Any) map[string]*anypb.Any {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
