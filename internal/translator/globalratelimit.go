package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/config/ratelimit/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// globalRateLimitFilters is the HCM's global rate limit filter, or none
// when no host behind the HCM sends descriptors: the filter then has
// nothing to ask and its service may not even exist.
//
// It runs after ext_authz, as in Contour, so that a request the
// authorization service refuses takes nothing from the limits.
func globalRateLimitFilters(svc *dag.RateLimitService) []*envoy_filter_network_http_connection_manager_v3.HttpFilter {
	if svc == nil {
		return nil
	}
	target := &envoy_config_core_v3.GrpcService_EnvoyGrpc{ClusterName: svc.Cluster.Name}
	if t := svc.Cluster.Spec.UpstreamTLS; t != nil {
		// The name the SNI and the server's certificate carry, as for
		// ext_authz.
		target.Authority = t.SubjectName
	}
	cfg := &envoy_filter_http_ratelimit_v3.RateLimit{
		Domain:          svc.Domain,
		FailureModeDeny: !svc.FailOpen,
		RateLimitService: &envoy_config_ratelimit_v3.RateLimitServiceConfig{
			GrpcService: &envoy_config_core_v3.GrpcService{
				TargetSpecifier: &envoy_config_core_v3.GrpcService_EnvoyGrpc_{EnvoyGrpc: target},
			},
			TransportApiVersion: envoy_config_core_v3.ApiVersion_V3,
		},
	}
	if svc.Timeout > 0 {
		cfg.Timeout = duration(svc.Timeout)
	}
	if svc.XHeaders {
		cfg.EnableXRatelimitHeaders = envoy_filter_http_ratelimit_v3.RateLimit_DRAFT_VERSION_03
	}
	return []*envoy_filter_network_http_connection_manager_v3.HttpFilter{httpFilter(filterRateLimit, cfg)}
}

// plainRateLimitService is the rate limit service of the plain-HTTP
// listener, which all plain hosts share: that of the first host, in name
// order, that uses one. Every host of a build resolves the same service.
func plainRateLimitService(vhs []*dag.VirtualHost) *dag.RateLimitService {
	var out *dag.RateLimitService
	first := ""
	for _, vh := range uniqueVirtualHosts(vhs) {
		if vh.RateLimitService != nil && (out == nil || vh.FQDN < first) {
			out, first = vh.RateLimitService, vh.FQDN
		}
	}
	return out
}

// globalRateLimits turns descriptors into Envoy's rate limit actions, one
// RateLimit per descriptor and one action per entry, in their order.
func globalRateLimits(descs []dag.RateLimitDescriptor) []*envoy_config_route_v3.RateLimit {
	if len(descs) == 0 {
		return nil
	}
	out := make([]*envoy_config_route_v3.RateLimit, 0, len(descs))
	for _, d := range descs {
		rl := &envoy_config_route_v3.RateLimit{}
		for _, e := range d.Entries {
			rl.Actions = append(rl.Actions, rateLimitAction(e))
		}
		out = append(out, rl)
	}
	return out
}

func rateLimitAction(e dag.RateLimitEntry) *envoy_config_route_v3.RateLimit_Action {
	a := &envoy_config_route_v3.RateLimit_Action{}
	switch {
	case e.GenericKey != nil:
		a.ActionSpecifier = &envoy_config_route_v3.RateLimit_Action_GenericKey_{GenericKey: &envoy_config_route_v3.RateLimit_Action_GenericKey{
			DescriptorKey: e.GenericKey.Key, DescriptorValue: e.GenericKey.Value,
		}}
	case e.RequestHeader != nil:
		a.ActionSpecifier = &envoy_config_route_v3.RateLimit_Action_RequestHeaders_{RequestHeaders: &envoy_config_route_v3.RateLimit_Action_RequestHeaders{
			HeaderName: e.RequestHeader.HeaderName, DescriptorKey: e.RequestHeader.DescriptorKey,
		}}
	case e.HeaderValueMatch != nil:
		m := &envoy_config_route_v3.RateLimit_Action_HeaderValueMatch{
			DescriptorValue: e.HeaderValueMatch.Value,
			ExpectMatch:     boolValue(e.HeaderValueMatch.ExpectMatch),
		}
		for _, h := range e.HeaderValueMatch.Headers {
			m.Headers = append(m.Headers, headerMatcher(h))
		}
		a.ActionSpecifier = &envoy_config_route_v3.RateLimit_Action_HeaderValueMatch_{HeaderValueMatch: m}
	default:
		a.ActionSpecifier = &envoy_config_route_v3.RateLimit_Action_RemoteAddress_{RemoteAddress: &envoy_config_route_v3.RateLimit_Action_RemoteAddress{}}
	}
	return a
}

// ignoreHostRateLimits is the typed_per_filter_config of a route that
// disables global rate limiting: Envoy's default (OVERRIDE) would still
// apply the host's limits to a route without its own.
func ignoreHostRateLimits() *anypb.Any {
	return toAny(&envoy_filter_http_ratelimit_v3.RateLimitPerRoute{
		VhRateLimits: envoy_filter_http_ratelimit_v3.RateLimitPerRoute_IGNORE,
	})
}

// withHostRateLimits adds the host's descriptors to its route
// configuration's virtual host.
func withHostRateLimits(rc *envoy_config_route_v3.RouteConfiguration, p *dag.HostPolicies) *envoy_config_route_v3.RouteConfiguration {
	if rl := globalRateLimits(p.GlobalRateLimits); rl != nil {
		rc.VirtualHosts[0].RateLimits = rl
	}
	return rc
}
