package translator

import (
	"regexp"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// Direct responses that replace a forwarding route for gRPC clients. gRPC
// fails an RPC that matches a direct_response route with UNAVAILABLE; the
// status and body are for whoever reads the configuration.
const (
	grpcAuthzStatus = 403
	grpcAuthzBody   = "this host requires authorization, which proxyless gRPC clients cannot perform; call it through the Envoy ingress"
	grpcJWTBody     = "this route requires a verified JWT, which proxyless gRPC clients cannot present to Switchyard; call it through the Envoy ingress"
	grpcTLSStatus   = 503
	grpcTLSBody     = "this route's backends require upstream certificate validation, which Switchyard cannot configure for proxyless gRPC clients; call it through the Envoy ingress"
)

// grpcRoutes returns the DAG routes a host serves to gRPC clients: the
// secure virtual host's when it has routes, else the plain one's. A secure
// host's plain-HTTP copies only redirect to https, so they are what a
// gRPC client gets only when the host has nothing else. authz reports
// whether the routes sit behind ext_authz for Envoy (see grpcAuthorized).
func grpcRoutes(h GRPCHost) (routes []*dag.Route, authz bool) {
	if s := h.Secure; s != nil && s.TCPProxy == nil && !s.Passthrough && len(s.Routes) > 0 {
		return s.Routes, grpcAuthorized(s)
	}
	if h.Plain != nil {
		return h.Plain.Routes, false
	}
	return nil, false
}

// grpcAuthorized reports whether a secure host's routes are checked by
// ext_authz. That is the case when it has an authorization server, and
// also when the DAG could not configure one: it then keeps the routes'
// authorization state but no Authorization (and has already turned their
// forwarding into 503s).
func grpcAuthorized(s *dag.SecureVirtualHost) bool {
	if s.Authorization != nil {
		return true
	}
	for _, r := range s.Routes {
		if r != nil && (r.AuthDisabled || len(r.AuthContext) > 0) {
			return true
		}
	}
	return false
}

// grpcRefused reports whether a route must not forward for gRPC clients
// and, when it must not, the status and body of the direct response it
// answers instead. It builds nothing, so that GRPCClusters can ask it of
// every route.
//
// Authorization fails closed. A proxyless client talks to the backends
// directly and gRPC cannot run ext_authz on the client (grpc-go NACKs the
// filter and its per-route config), so a route Envoy would check is not
// forwarded at all: every route of an authorized host that does not
// disable authorization answers 403, whatever its action. JWT
// verification fails closed the same way: gRPC has no jwt_authn filter,
// so a route that verifies tokens answers 403.
//
// A route whose backends need upstream certificate validation answers 503:
// gRPC verifies backends only with certificate-provider instances from its
// own bootstrap, which Switchyard does not know, and NACKs Envoy's SDS
// validation context. Those clusters are left out of the group entirely.
func grpcRefused(r *dag.Route, authz bool) (status uint32, body string, refused bool) {
	switch {
	case authz && !r.AuthDisabled:
		return grpcAuthzStatus, grpcAuthzBody, true
	case r.JWTProvider != "":
		return grpcAuthzStatus, grpcJWTBody, true
	case r.Forward != nil && !r.HTTPSRedirect && needsUpstreamValidation(r.Forward):
		return grpcTLSStatus, grpcTLSBody, true
	}
	return 0, "", false
}

func grpcDirectResponse(status uint32, body string) *envoy_config_route_v3.DirectResponseAction {
	return &envoy_config_route_v3.DirectResponseAction{
		Status: status,
		Body:   &envoy_config_core_v3.DataSource{Specifier: &envoy_config_core_v3.DataSource_InlineString{InlineString: body}},
	}
}

// needsUpstreamValidation reports whether any backend cluster of a route
// verifies its backends' certificates.
func needsUpstreamValidation(f *dag.Forward) bool {
	if f.Cluster != nil && f.Cluster.Spec.UpstreamTLS != nil {
		return true
	}
	for _, w := range f.Weighted {
		if w.Cluster != nil && w.Cluster.Spec.UpstreamTLS != nil {
			return true
		}
	}
	return false
}

// GRPCRouteConfig returns the route configuration "grpc/<fqdn>" of a host
// for gRPC clients, or nil when the host serves no routes (a TCP proxy).
//
// It holds one virtual host whose domains are the name and the name with
// any port: gRPC matches them against the dial target's authority, port
// included, and both are valid gRPC patterns. Each route is the Envoy
// route, shaped to what grpc-go accepts:
//
//   - path_separated_prefix, which gRPC NACKs, becomes the equivalent
//     safe_regex ("/a" matches "/a" and "/a/..." and nothing else; gRPC
//     matches a regex against the whole path).
//   - typed_per_filter_config is dropped at every level: gRPC NACKs a
//     per-filter config whose filter it does not know, such as
//     ExtAuthzPerRoute.
//   - request_mirror_policies are dropped.
//   - the response timeout moves to max_stream_duration, the only timeout
//     gRPC reads (it ignores RouteAction.timeout); 0 still means none.
//   - a retry policy never carries num_retries 0 or a zero back-off, which
//     gRPC NACKs.
//   - routes with query-parameter conditions are left out: an RPC has no
//     query string, so they never match (gRPC would skip them too).
//   - pseudo-header conditions are resolved (see grpcPseudoHeaders).
//   - routes that must not forward (see grpcRefused) answer a
//     direct_response instead.
//
// Fields gRPC ignores without NACKing (header rewrites, websocket upgrades,
// hash policies it does not implement) are left as Envoy has them.
// Redirects and direct responses are kept: gRPC accepts them and fails the
// RPCs that match them with UNAVAILABLE.
func GRPCRouteConfig(h GRPCHost) *envoy_config_route_v3.RouteConfiguration {
	return (*Owners)(nil).GRPCRouteConfig(h)
}

// GRPCRouteConfig is the package's GRPCRouteConfig, with the owner
// metadata o hands out.
func (o *Owners) GRPCRouteConfig(h GRPCHost) *envoy_config_route_v3.RouteConfiguration {
	routes, authz := grpcRoutes(h)
	if len(routes) == 0 {
		return nil
	}
	out := make([]*envoy_config_route_v3.Route, 0, len(routes))
	for _, r := range routes {
		if r == nil {
			continue
		}
		if rt := o.grpcRoute(r, authz); rt != nil {
			out = append(out, rt)
		}
	}
	proxy := h.Plain
	if h.Secure != nil {
		proxy = &h.Secure.VirtualHost
	}
	return o.ownedBy(routeConfig(GRPCRouteName(h.FQDN), h.FQDN, out, nil), proxy.Proxy)
}

// grpcRoute translates one DAG route for gRPC (see GRPCRouteConfig), or
// returns nil for a route gRPC clients never match.
func (o *Owners) grpcRoute(r *dag.Route, authz bool) *envoy_config_route_v3.Route {
	if len(r.QueryParamMatches) > 0 {
		return nil
	}
	r, ok := grpcPseudoHeaders(r)
	if !ok {
		return nil
	}
	var rt *envoy_config_route_v3.Route
	if r.HTTPSRedirect {
		rt = o.httpsRedirectRoute(r)
	} else {
		rt = o.route(r, false)
	}
	if rt == nil {
		return nil
	}
	grpcMatch(rt.Match)
	if status, body, refused := grpcRefused(r, authz); refused {
		return &envoy_config_route_v3.Route{
			Name:     rt.Name,
			Match:    rt.Match,
			Metadata: rt.Metadata,
			Action:   &envoy_config_route_v3.Route_DirectResponse{DirectResponse: grpcDirectResponse(status, body)},
		}
	}
	rt.TypedPerFilterConfig = nil
	if ra, ok := rt.Action.(*envoy_config_route_v3.Route_Route); ok {
		if !grpcAction(ra.Route) {
			rt.Action = noBackendResponse()
		}
	}
	return rt
}

// grpcMatch replaces path_separated_prefix with the regex gRPC can read.
func grpcMatch(m *envoy_config_route_v3.RouteMatch) {
	if p, ok := m.GetPathSpecifier().(*envoy_config_route_v3.RouteMatch_PathSeparatedPrefix); ok {
		m.PathSpecifier = &envoy_config_route_v3.RouteMatch_SafeRegex{
			SafeRegex: regex(segmentPrefixRegex(p.PathSeparatedPrefix)),
		}
	}
}

// segmentPrefixRegex is the full-match regex of a segment-boundary prefix:
// the prefix itself, optionally followed by "/" and anything.
func segmentPrefixRegex(prefix string) string {
	return regexp.QuoteMeta(prefix) + "(?:/.*)?"
}

// grpcAction shapes a forwarding action in place (see GRPCRouteConfig). It
// returns false when no backend with a weight is left, which gRPC would
// NACK as a weighted_clusters total of 0.
func grpcAction(a *envoy_config_route_v3.RouteAction) bool {
	a.RequestMirrorPolicies = nil
	// Rate limits are Envoy's: a proxyless client has no filter to ask
	// the rate limit service (site/rate-limiting.md).
	a.RateLimits = nil
	if a.Timeout != nil {
		a.MaxStreamDuration = &envoy_config_route_v3.RouteAction_MaxStreamDuration{MaxStreamDuration: a.Timeout}
		a.Timeout = nil
	}
	a.RetryPolicy = grpcRetryPolicy(a.RetryPolicy)
	if wc := a.GetWeightedClusters(); wc != nil {
		kept := wc.Clusters[:0]
		for _, c := range wc.Clusters {
			if c.GetWeight().GetValue() == 0 {
				continue
			}
			c.TypedPerFilterConfig = nil
			kept = append(kept, c)
		}
		wc.Clusters = kept
		return len(kept) > 0
	}
	return true
}

// grpcRetryPolicy drops what gRPC NACKs from a retry policy: num_retries 0
// (Switchyard's "no retries", so the whole policy goes) and a back-off
// whose intervals are not positive (gRPC then uses its defaults, 25ms and
// ten times that).
func grpcRetryPolicy(rp *envoy_config_route_v3.RetryPolicy) *envoy_config_route_v3.RetryPolicy {
	if rp == nil || (rp.NumRetries != nil && rp.NumRetries.GetValue() == 0) {
		return nil
	}
	if b := rp.RetryBackOff; b != nil {
		switch {
		case b.BaseInterval == nil || b.BaseInterval.AsDuration() <= 0:
			rp.RetryBackOff = nil
		case b.MaxInterval != nil && b.MaxInterval.AsDuration() <= 0:
			b.MaxInterval = nil
		}
	}
	return rp
}
