package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_internal_redirect_previous_routes_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/internal_redirect/previous_routes/v3"
	envoy_internal_redirect_safe_cross_scheme_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/internal_redirect/safe_cross_scheme/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

const (
	predicatePreviousRoutes  = "envoy.internal_redirect_predicates.previous_routes"
	predicateSafeCrossScheme = "envoy.internal_redirect_predicates.safe_cross_scheme"
)

// internalRedirectPolicy maps a route's internal redirects. SafeOnly is
// Envoy's cross-scheme permission narrowed by the safe_cross_scheme
// predicate, which lets https requests follow http targets but not the
// reverse.
func internalRedirectPolicy(ir *dag.InternalRedirect) *envoy_config_route_v3.InternalRedirectPolicy {
	if ir == nil {
		return nil
	}
	p := &envoy_config_route_v3.InternalRedirectPolicy{
		RedirectResponseCodes:    ir.Codes,
		AllowCrossSchemeRedirect: ir.CrossScheme != "",
	}
	if ir.MaxRedirects > 0 {
		p.MaxInternalRedirects = wrapperspb.UInt32(ir.MaxRedirects)
	}
	if ir.CrossScheme == "SafeOnly" {
		p.Predicates = append(p.Predicates, &envoy_config_core_v3.TypedExtensionConfig{
			Name:        predicateSafeCrossScheme,
			TypedConfig: toAny(&envoy_internal_redirect_safe_cross_scheme_v3.SafeCrossSchemeConfig{}),
		})
	}
	if ir.DenyRepeatedRoute {
		p.Predicates = append(p.Predicates, &envoy_config_core_v3.TypedExtensionConfig{
			Name:        predicatePreviousRoutes,
			TypedConfig: toAny(&envoy_internal_redirect_previous_routes_v3.PreviousRoutesConfig{}),
		})
	}
	return p
}
