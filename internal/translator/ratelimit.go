package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_filter_http_local_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// localRateLimitStatPrefix prefixes the local rate limit's stats
// (http_local_rate_limit.<prefix>.rate_limited, ...).
const localRateLimitStatPrefix = "vhost_rate_limit"

// localRateLimitFilter is the HCM's local rate limit filter. Without a
// token bucket it limits nothing: virtual hosts and routes bring their
// own (see localRateLimitConfig).
func localRateLimitFilter() *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	return constFilter(filterLocalRateLimit, localRateLimitConfigURL, localRateLimitEncoded)
}

// localRateLimitConfigURL and localRateLimitEncoded are what toAny packs
// for the filter's config, LocalRateLimit{StatPrefix:
// localRateLimitStatPrefix}: field 1, 16 bytes.
const (
	localRateLimitConfigURL = "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit"
	localRateLimitEncoded   = "\x0a\x10" + localRateLimitStatPrefix
)

// localRateLimitConfig is the typed_per_filter_config of a virtual host's
// or route's bucket. filter_enabled and filter_enforced must be set: left
// out, they default to 0 %, and the bucket would limit nothing.
func localRateLimitConfig(l *dag.LocalRateLimit) *anypb.Any {
	all := func(key string) *envoy_config_core_v3.RuntimeFractionalPercent {
		return &envoy_config_core_v3.RuntimeFractionalPercent{
			DefaultValue: &envoy_type_v3.FractionalPercent{Numerator: 100, Denominator: envoy_type_v3.FractionalPercent_HUNDRED},
			RuntimeKey:   key,
		}
	}
	cfg := &envoy_filter_http_local_ratelimit_v3.LocalRateLimit{
		StatPrefix: localRateLimitStatPrefix,
		TokenBucket: &envoy_type_v3.TokenBucket{
			MaxTokens:     l.MaxTokens,
			TokensPerFill: u32(l.TokensPerFill),
			FillInterval:  duration(l.FillInterval),
		},
		FilterEnabled:  all("local_rate_limit_enabled"),
		FilterEnforced: all("local_rate_limit_enforced"),
	}
	if l.StatusCode != 429 {
		cfg.Status = &envoy_type_v3.HttpStatus{Code: envoy_type_v3.StatusCode(l.StatusCode)}
	}
	for _, h := range l.ResponseHeaders {
		cfg.ResponseHeadersToAdd = append(cfg.ResponseHeadersToAdd, &envoy_config_core_v3.HeaderValueOption{
			Header:       &envoy_config_core_v3.HeaderValue{Key: h.Name, Value: h.Value},
			AppendAction: envoy_config_core_v3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		})
	}
	return toAny(cfg)
}
