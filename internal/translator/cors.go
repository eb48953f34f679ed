package translator

import (
	"strings"

	envoy_filter_http_cors_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// corsFilter is the HCM's CORS filter. Like the RBAC filter it has no
// settings of its own: a virtual host's CorsPolicy switches it on (see
// corsConfig), and a host without one gets no CORS headers.
func corsFilter() *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	return constFilter(filterCORS, corsConfigURL, "")
}

// corsConfigURL is the type URL toAny gives the CORS filter's config.
const corsConfigURL = "type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors"

// corsConfig is a virtual host's CorsPolicy. Exact origins ignore case, as
// scheme and host do; "*" is exact too, and Envoy lets any origin through
// for it. Credentials and private-network access are sent only when
// allowed, so that Envoy's defaults (off) stay visible as absence.
func corsConfig(p *dag.CORSPolicy) *anypb.Any {
	cfg := &envoy_filter_http_cors_v3.CorsPolicy{
		AllowMethods:  strings.Join(p.AllowMethods, ","),
		AllowHeaders:  strings.Join(p.AllowHeaders, ","),
		ExposeHeaders: strings.Join(p.ExposeHeaders, ","),
		MaxAge:        p.MaxAge,
	}
	for _, o := range p.AllowOrigins {
		m := &envoy_type_matcher_v3.StringMatcher{
			MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: o.Value},
			IgnoreCase:   true,
		}
		if o.Regex {
			m = &envoy_type_matcher_v3.StringMatcher{MatchPattern: &envoy_type_matcher_v3.StringMatcher_SafeRegex{SafeRegex: regex(o.Value)}}
		}
		cfg.AllowOriginStringMatch = append(cfg.AllowOriginStringMatch, m)
	}
	if p.AllowCredentials {
		cfg.AllowCredentials = boolValue(true)
	}
	if p.AllowPrivateNetwork {
		cfg.AllowPrivateNetworkAccess = boolValue(true)
	}
	return toAny(cfg)
}
