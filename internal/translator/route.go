package translator

import (
	"cmp"
	"strings"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_ext_authz_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// HTTPRouteName is the name of a plain-HTTP virtual host's
// RouteConfiguration and of the scope that selects it.
func HTTPRouteName(fqdn string) string { return "http/" + fqdn }

// HTTPSRouteName is the name of a secure virtual host's RouteConfiguration.
func HTTPSRouteName(fqdn string) string { return "https/" + fqdn }

// HTTPRouteConfig returns the route configuration of a plain-HTTP virtual
// host. Routes marked HTTPSRedirect answer with a redirect to https here:
// they are the plain-HTTP copies of secure routes.
func HTTPRouteConfig(vh *dag.VirtualHost) *envoy_config_route_v3.RouteConfiguration {
	return (*Owners)(nil).HTTPRouteConfig(vh)
}

// HTTPRouteConfig is the package's HTTPRouteConfig, with the owner
// metadata o hands out.
func (o *Owners) HTTPRouteConfig(vh *dag.VirtualHost) *envoy_config_route_v3.RouteConfiguration {
	routes := make([]*envoy_config_route_v3.Route, 0, len(vh.Routes))
	for _, r := range vh.Routes {
		if r == nil {
			continue
		}
		if r.HTTPSRedirect {
			routes = append(routes, o.httpsRedirectRoute(r))
		} else if rt := o.route(r, false); rt != nil {
			routes = append(routes, rt)
		}
	}
	rc := withHostRateLimits(o.ownedBy(routeConfig(HTTPRouteName(vh.FQDN), vh.FQDN, routes, hostPolicyConfigs(vh)), vh.Proxy), &vh.HostPolicies)
	rc.RequestHeadersToRemove = []string{HostScopeHeader}
	return rc
}

// HTTPSRouteConfig returns the route configuration of a secure virtual
// host, or nil when the host forwards TCP and so has no routes.
//
// With authorization, the virtual host carries its context for ext_authz
// and each route its own override (see extAuthzPerRoute). HTTPSRedirect is
// ignored: the request already arrived over TLS.
func HTTPSRouteConfig(svh *dag.SecureVirtualHost) *envoy_config_route_v3.RouteConfiguration {
	return (*Owners)(nil).HTTPSRouteConfig(svh)
}

// HTTPSRouteConfig is the package's HTTPSRouteConfig, with the owner
// metadata o hands out.
func (o *Owners) HTTPSRouteConfig(svh *dag.SecureVirtualHost) *envoy_config_route_v3.RouteConfiguration {
	if svh.TCPProxy != nil || svh.Passthrough {
		return nil
	}
	authz := svh.Authorization != nil
	routes := make([]*envoy_config_route_v3.Route, 0, len(svh.Routes))
	for _, r := range svh.Routes {
		if r == nil {
			continue
		}
		if rt := o.route(r, authz); rt != nil {
			routes = append(routes, rt)
		}
	}
	var perFilter map[string]*anypb.Any
	if authz && len(svh.Authorization.Context) > 0 {
		perFilter = map[string]*anypb.Any{filterExtAuthz: toAny(&envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute{
			Override: &envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute_CheckSettings{
				CheckSettings: &envoy_filter_http_ext_authz_v3.CheckSettings{ContextExtensions: svh.Authorization.Context},
			},
		})}
	}
	rc := o.ownedBy(routeConfig(HTTPSRouteName(svh.FQDN), svh.FQDN, routes, mergeConfigs(perFilter, hostPolicyConfigs(&svh.VirtualHost))), svh.Proxy)
	return withHostRateLimits(rc, &svh.HostPolicies)
}

// routeConfig wraps the routes of one host. The virtual host answers for
// the bare name and for the name with any port, since clients send the
// port in Host whenever it is not the scheme's default.
//
// A wildcard host answers for every name: its listener (SNI, scope key or
// gRPC target) already picked it, and each of its routes matches
// :authority against one label and the domain, which Envoy's "*.domain"
// (any number of labels, no port) cannot express.
func routeConfig(name, fqdn string, routes []*envoy_config_route_v3.Route, perFilter map[string]*anypb.Any) *envoy_config_route_v3.RouteConfiguration {
	// One allocation for the messages and slices: every host has up to
	// three route configurations.
	b := &struct {
		rc      envoy_config_route_v3.RouteConfiguration
		vhs     [1]*envoy_config_route_v3.VirtualHost
		vh      envoy_config_route_v3.VirtualHost
		domains [2]string
	}{}
	b.domains[0] = "*"
	domains := b.domains[:1]
	if !strings.HasPrefix(fqdn, "*.") {
		b.domains[0], b.domains[1] = fqdn, fqdn+":*"
		domains = b.domains[:]
	}
	b.vh.Name, b.vh.Domains, b.vh.Routes, b.vh.TypedPerFilterConfig = fqdn, domains, routes, perFilter
	b.vhs[0] = &b.vh
	b.rc.Name, b.rc.VirtualHosts = name, b.vhs[:]
	return &b.rc
}

// httpsRedirectRoute keeps the match of a secure route and replaces its
// action with a redirect to the same URL over https (301).
func (o *Owners) httpsRedirectRoute(r *dag.Route) *envoy_config_route_v3.Route {
	return &envoy_config_route_v3.Route{
		Name:     r.Name,
		Match:    routeMatch(r),
		Metadata: o.routeMetadata(r),
		Action: &envoy_config_route_v3.Route_Redirect{Redirect: &envoy_config_route_v3.RedirectAction{
			SchemeRewriteSpecifier: &envoy_config_route_v3.RedirectAction_HttpsRedirect{HttpsRedirect: true},
		}},
	}
}

// route translates one DAG route, or returns nil for a route without an
// action, which the DAG never builds and Envoy would reject.
func (o *Owners) route(r *dag.Route, authz bool) *envoy_config_route_v3.Route {
	// One allocation for the route and its action's wrapper: most routes
	// forward.
	b := &struct {
		rt     envoy_config_route_v3.Route
		action envoy_config_route_v3.Route_Route
	}{}
	rt := &b.rt
	rt.Name, rt.Match, rt.Metadata = r.Name, routeMatch(r), o.routeMetadata(r)
	reqAdd, reqRemove, hostRewrite := headerOps(r.RequestHeaders)
	switch {
	case r.Forward != nil:
		action := routeAction(r)
		if action == nil {
			rt.Action = noBackendResponse()
			break
		}
		switch hostRewrite = cmp.Or(r.HostRewrite, hostRewrite); {
		case r.HostRewriteHeader != "":
			action.HostRewriteSpecifier = &envoy_config_route_v3.RouteAction_HostRewriteHeader{HostRewriteHeader: r.HostRewriteHeader}
		case hostRewrite != "":
			action.HostRewriteSpecifier = &envoy_config_route_v3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: hostRewrite}
		}
		action.RateLimits = globalRateLimits(r.GlobalRateLimits)
		b.action.Route = action
		rt.Action = &b.action
	case r.Redirect != nil:
		rt.Action = &envoy_config_route_v3.Route_Redirect{Redirect: redirectAction(r.Redirect)}
	case r.DirectResponse != nil:
		rt.Action = &envoy_config_route_v3.Route_DirectResponse{DirectResponse: directResponse(r.DirectResponse)}
	default:
		return nil
	}
	rt.RequestHeadersToAdd, rt.RequestHeadersToRemove = reqAdd, reqRemove
	rt.ResponseHeadersToAdd, rt.ResponseHeadersToRemove, _ = headerOps(r.ResponseHeaders)
	if authz {
		rt.TypedPerFilterConfig = extAuthzPerRoute(r)
	}
	rt.TypedPerFilterConfig = routePolicyConfigs(r, rt.TypedPerFilterConfig)
	if r.Forward != nil {
		rt.TypedPerFilterConfig = withCookies(rt.TypedPerFilterConfig, r.CookieRewrites)
	}
	return rt
}

// noBackendResponse answers a forwarding route none of whose services
// exist. A 503 says "this route is configured but has nowhere to go", which
// is what a route with an empty cluster would answer too, without a cluster
// that matches nothing.
func noBackendResponse() *envoy_config_route_v3.Route_DirectResponse {
	return &envoy_config_route_v3.Route_DirectResponse{
		DirectResponse: &envoy_config_route_v3.DirectResponseAction{Status: 503},
	}
}

// extAuthzPerRoute returns the ext_authz override of a route on an
// authorized host: off, or the route's context. AuthContext already holds
// the route's context merged over the host's, so the check sees the same
// keys whether Envoy merges the route's map into the virtual host's or
// lets it replace it; a route without one inherits the virtual host's.
func extAuthzPerRoute(r *dag.Route) map[string]*anypb.Any {
	var cfg *envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute
	switch {
	case r.AuthDisabled:
		cfg = &envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute{
			Override: &envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute_Disabled{Disabled: true},
		}
	case len(r.AuthContext) > 0:
		cfg = &envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute{
			Override: &envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute_CheckSettings{
				CheckSettings: &envoy_filter_http_ext_authz_v3.CheckSettings{ContextExtensions: r.AuthContext},
			},
		}
	default:
		return nil
	}
	return map[string]*anypb.Any{filterExtAuthz: toAny(cfg)}
}

// redirectAction maps a DAG redirect. A zero status code keeps Envoy's
// default, 301.
func redirectAction(rd *dag.Redirect) *envoy_config_route_v3.RedirectAction {
	a := &envoy_config_route_v3.RedirectAction{
		HostRedirect: rd.Hostname,
		PortRedirect: rd.Port,
		ResponseCode: redirectCode(rd.StatusCode),
	}
	if rd.Scheme != "" {
		a.SchemeRewriteSpecifier = &envoy_config_route_v3.RedirectAction_SchemeRedirect{SchemeRedirect: rd.Scheme}
	}
	switch {
	case rd.Path != "":
		a.PathRewriteSpecifier = &envoy_config_route_v3.RedirectAction_PathRedirect{PathRedirect: rd.Path}
	case rd.Prefix != "":
		a.PathRewriteSpecifier = &envoy_config_route_v3.RedirectAction_PrefixRewrite{PrefixRewrite: rd.Prefix}
	}
	return a
}

func redirectCode(code uint32) envoy_config_route_v3.RedirectAction_RedirectResponseCode {
	switch code {
	case 302:
		return envoy_config_route_v3.RedirectAction_FOUND
	case 303:
		return envoy_config_route_v3.RedirectAction_SEE_OTHER
	case 307:
		return envoy_config_route_v3.RedirectAction_TEMPORARY_REDIRECT
	case 308:
		return envoy_config_route_v3.RedirectAction_PERMANENT_REDIRECT
	default:
		return envoy_config_route_v3.RedirectAction_MOVED_PERMANENTLY
	}
}

func directResponse(dr *dag.DirectResponse) *envoy_config_route_v3.DirectResponseAction {
	a := &envoy_config_route_v3.DirectResponseAction{Status: dr.StatusCode}
	if dr.Body != "" {
		a.Body = &envoy_config_core_v3.DataSource{
			Specifier: &envoy_config_core_v3.DataSource_InlineString{InlineString: dr.Body},
		}
	}
	return a
}
