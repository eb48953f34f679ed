package explain

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_ext_authz_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	envoy_filter_http_router_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// filterContext is what a policy explainer gets: the filter's own
// configuration, the most specific per-route configuration (nil when
// none) and where that came from.
type filterContext struct {
	filter   *envoy_filter_network_http_connection_manager_v3.HttpFilter
	config   proto.Message
	perRoute proto.Message
	level    string
	// route is the matched route, nil when none matched: Envoy runs the
	// filters before the router answers 404.
	route *envoy_config_route_v3.Route
	vhost *envoy_config_route_v3.VirtualHost
}

// policyExplainer explains one kind of HTTP filter. It returns the
// policy, and may decide the outcome when the filter settles it (a 403
// that does not depend on anything outside the resources). A new filter
// is one function and one entry in policyExplainers.
type policyExplainer func(w *walk, fc filterContext) Policy

// policyExplainers are keyed by the type URL of the filter's typed_config,
// which unlike the filter's name cannot be chosen freely.
var policyExplainers = map[string]policyExplainer{
	typeURL(&envoy_filter_http_ext_authz_v3.ExtAuthz{}): extAuthzPolicy,
}

func typeURL(m proto.Message) string {
	return "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName())
}

// policies explains each HTTP filter on the way to the router, in order.
func (w *walk) policies(filters []*envoy_filter_network_http_connection_manager_v3.HttpFilter, rc *envoy_config_route_v3.RouteConfiguration, vh *envoy_config_route_v3.VirtualHost, rt *envoy_config_route_v3.Route) {
	for _, f := range filters {
		url := f.GetTypedConfig().GetTypeUrl()
		if url == typeURL(&envoy_filter_http_router_v3.Router{}) {
			return
		}
		fc := filterContext{filter: f, config: unpack(f.GetTypedConfig()), route: rt, vhost: vh}
		var disabled bool
		fc.perRoute, fc.level, disabled = perRouteConfig(f.GetName(), rc, vh, rt)
		if disabled || (f.GetDisabled() && fc.perRoute == nil) {
			w.out.Policies = append(w.out.Policies, Policy{Filter: f.GetName(), Kind: kindOf(url), Effect: "skipped", Level: fc.level,
				Detail: "the filter is disabled for this request"})
			continue
		}
		explain := policyExplainers[url]
		if explain == nil {
			w.out.Policies = append(w.out.Policies, Policy{Filter: f.GetName(), Kind: "unknown", Effect: "unknown", Level: fc.level,
				Detail: fmt.Sprintf("explain does not know filter %s (%s): what it does to this request is not shown", f.GetName(), url)})
			continue
		}
		p := explain(w, fc)
		p.Filter, p.Level = f.GetName(), fc.level
		w.out.Policies = append(w.out.Policies, p)
		if w.out.Decision.Kind != "" {
			return
		}
	}
}

// kindOf names a filter kind from its config's type URL:
// "...filters.http.ext_authz.v3.ExtAuthz" is ext_authz.
func kindOf(url string) string {
	parts := strings.Split(url, ".")
	for i, p := range parts {
		if p == "http" && i+1 < len(parts) {
			return parts[i+1]
		}
	}
	return "unknown"
}

// perRouteConfig returns the most specific typed_per_filter_config for a
// filter — route, then virtual host, then route configuration — unwrapping
// envoy.config.route.v3.FilterConfig, and whether that disables the filter.
func perRouteConfig(name string, rc *envoy_config_route_v3.RouteConfiguration, vh *envoy_config_route_v3.VirtualHost, rt *envoy_config_route_v3.Route) (proto.Message, string, bool) {
	levels := []struct {
		level string
		m     map[string]*anypb.Any
	}{{"route", rt.GetTypedPerFilterConfig()}, {"virtual host", vh.GetTypedPerFilterConfig()}, {"route configuration", rc.GetTypedPerFilterConfig()}}
	for _, l := range levels {
		a, ok := l.m[name]
		if !ok {
			continue
		}
		m := unpack(a)
		if fc, ok := m.(*envoy_config_route_v3.FilterConfig); ok {
			if fc.GetDisabled() {
				return nil, l.level, true
			}
			m = unpack(fc.GetConfig())
			if m == nil {
				// An empty FilterConfig only enables a filter disabled by
				// default.
				m = fc
			}
		}
		return m, l.level, false
	}
	return nil, "", false
}

// extAuthzPolicy explains ext_authz: skipped for the route, or checked by
// the authorization server — which decides, so the outcome is conditional,
// unless the server has no healthy endpoint, when it is a 403 (or the
// request passes unchecked, with failure_mode_allow).
func extAuthzPolicy(w *walk, fc filterContext) Policy {
	p := Policy{Kind: "ext_authz", Effect: "applies"}
	per, _ := fc.perRoute.(*envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute)
	if per.GetDisabled() {
		p.Effect, p.Detail = "skipped", "authorization is disabled for this route"
		return p
	}
	cfg, _ := fc.config.(*envoy_filter_http_ext_authz_v3.ExtAuthz)
	cluster := cfg.GetGrpcService().GetEnvoyGrpc().GetClusterName()
	if cluster == "" {
		cluster = cfg.GetHttpService().GetServerUri().GetCluster()
	}
	p.Detail = fmt.Sprintf("each request is checked by the authorization server of cluster %s", cluster)
	if ctx := per.GetCheckSettings().GetContextExtensions(); len(ctx) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(ctx)) {
			kv = append(kv, k+"="+ctx[k])
		}
		p.Detail += ", with context " + strings.Join(kv, ", ")
	}
	b := w.backend(cluster, 100)
	if b.Unavailable < 100-1e-9 {
		w.conditional = append(w.conditional, fmt.Sprintf("the authorization server (cluster %s) allows the request; when it denies, the client gets its answer (403 by default)", cluster))
		return p
	}
	if cfg.GetFailureModeAllow() {
		p.Detail += fmt.Sprintf("; the server is unreachable (%s) and failure_mode_allow lets the request through unchecked", b.Problem)
		return p
	}
	status := 403
	if s := cfg.GetStatusOnError().GetCode(); s != 0 {
		status = int(s)
	}
	p.Detail += fmt.Sprintf("; the server is unreachable (%s)", b.Problem)
	w.decide(Decision{Kind: KindForbidden, Status: status,
		Reason: fmt.Sprintf("ext_authz cannot reach its authorization server (cluster %s: %s) and fails closed with %d", cluster, b.Problem, status),
		Fix:    "make the authorization server's Service (the ExtensionService of the root HTTPProxy's spec.virtualhost.authorization) have ready endpoints"})
	return p
}
