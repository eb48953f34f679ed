package explain

import (
	"strings"
	"testing"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_cors_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	envoy_filter_http_jwt_authn_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	envoy_filter_http_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	envoy_filter_http_router_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// withFilters serves one plain-HTTP host, example.com, whose one route
// ("/", per-route filter configs perRoute) answers 200, behind the given
// HTTP filters and the router.
func withFilters(t *testing.T, filters []*envoy_filter_network_http_connection_manager_v3.HttpFilter, perRoute map[string]proto.Message) *Resources {
	t.Helper()
	return withRoute(t, filters, perRoute, func(rt *envoy_config_route_v3.Route) {
		rt.Action = &envoy_config_route_v3.Route_DirectResponse{DirectResponse: &envoy_config_route_v3.DirectResponseAction{Status: 200}}
	})
}

// withRoute is withFilters with the route's action set by setAction.
func withRoute(t *testing.T, filters []*envoy_filter_network_http_connection_manager_v3.HttpFilter, perRoute map[string]proto.Message, setAction func(*envoy_config_route_v3.Route)) *Resources {
	t.Helper()
	rt := &envoy_config_route_v3.Route{
		Match:                &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}},
		TypedPerFilterConfig: map[string]*anypb.Any{},
	}
	setAction(rt)
	for name, m := range perRoute {
		rt.TypedPerFilterConfig[name] = mustAny(t, m)
	}
	filters = append(filters, &envoy_filter_network_http_connection_manager_v3.HttpFilter{
		Name: "envoy.filters.http.router", ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &envoy_filter_http_router_v3.Router{})},
	})
	hcm := &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{
		HttpFilters: filters,
		RouteSpecifier: &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_RouteConfig{RouteConfig: &envoy_config_route_v3.RouteConfiguration{
			Name: "inline", VirtualHosts: []*envoy_config_route_v3.VirtualHost{{Name: "example", Domains: []string{"example.com"}, Routes: []*envoy_config_route_v3.Route{rt}}},
		}},
	}
	l := &envoy_config_listener_v3.Listener{
		Name:    "http",
		Address: &envoy_config_core_v3.Address{Address: &envoy_config_core_v3.Address_SocketAddress{SocketAddress: &envoy_config_core_v3.SocketAddress{PortSpecifier: &envoy_config_core_v3.SocketAddress_PortValue{PortValue: 8080}}}},
		FilterChains: []*envoy_config_listener_v3.FilterChain{{Filters: []*envoy_config_listener_v3.Filter{{
			Name: "hcm", ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: mustAny(t, hcm)},
		}}}},
	}
	return NewResources([]proto.Message{l})
}

func httpFilter(t *testing.T, name string, cfg proto.Message) *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	return &envoy_filter_network_http_connection_manager_v3.HttpFilter{Name: name, ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, cfg)}}
}

// allowFrom is an RBAC filter that allows only the given CIDR.
func allowFrom(prefix string, bits uint32) *envoy_filter_http_rbac_v3.RBAC {
	return &envoy_filter_http_rbac_v3.RBAC{Rules: &envoy_config_rbac_v3.RBAC{
		Action: envoy_config_rbac_v3.RBAC_ALLOW,
		Policies: map[string]*envoy_config_rbac_v3.Policy{"office": {
			Permissions: []*envoy_config_rbac_v3.Permission{{Rule: &envoy_config_rbac_v3.Permission_Any{Any: true}}},
			Principals: []*envoy_config_rbac_v3.Principal{{Identifier: &envoy_config_rbac_v3.Principal_RemoteIp{
				RemoteIp: &envoy_config_core_v3.CidrRange{AddressPrefix: prefix, PrefixLen: wrapperspb.UInt32(bits)},
			}}},
		}},
	}}
}

func explainOrFail(t *testing.T, res *Resources, req Request) *Result {
	t.Helper()
	r, err := Explain(res, req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPolicies(t *testing.T) {
	rbac := []*envoy_filter_network_http_connection_manager_v3.HttpFilter{httpFilter(t, "envoy.filters.http.rbac", allowFrom("10.0.0.0", 8))}
	jwt := []*envoy_filter_network_http_connection_manager_v3.HttpFilter{httpFilter(t, "envoy.filters.http.jwt_authn", &envoy_filter_http_jwt_authn_v3.JwtAuthentication{
		Providers: map[string]*envoy_filter_http_jwt_authn_v3.JwtProvider{"idp": {Issuer: "https://idp"}},
		Rules: []*envoy_filter_http_jwt_authn_v3.RequirementRule{{
			Match:           &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/api"}},
			RequirementType: &envoy_filter_http_jwt_authn_v3.RequirementRule_Requires{Requires: &envoy_filter_http_jwt_authn_v3.JwtRequirement{RequiresType: &envoy_filter_http_jwt_authn_v3.JwtRequirement_ProviderName{ProviderName: "idp"}}},
		}},
	})}
	cors := []*envoy_filter_network_http_connection_manager_v3.HttpFilter{httpFilter(t, "envoy.filters.http.cors", &envoy_filter_http_cors_v3.Cors{})}
	corsPolicy := map[string]proto.Message{"envoy.filters.http.cors": &envoy_filter_http_cors_v3.CorsPolicy{
		AllowOriginStringMatch: []*envoy_type_matcher_v3.StringMatcher{{MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: "https://app.example.com"}}},
		AllowMethods:           "GET, POST",
	}}
	unknown := []*envoy_filter_network_http_connection_manager_v3.HttpFilter{httpFilter(t, "acme.filters.http.magic", &structpb.Struct{})}

	for _, tc := range []struct {
		name     string
		res      *Resources
		req      Request
		kind     string
		status   int
		effect   string
		contains string
	}{
		{"rbac allows an address in the range", withFilters(t, rbac, nil), Request{URL: "http://example.com/", SourceIP: "10.1.2.3"}, KindDirect, 200, "applies", `policy "office" matches`},
		{"rbac denies an address outside it", withFilters(t, rbac, nil), Request{URL: "http://example.com/", SourceIP: "192.0.2.1"}, KindForbidden, 403, "applies", "deny"},
		{"rbac without --source-ip is conditional", withFilters(t, rbac, nil), Request{URL: "http://example.com/"}, KindDirect, 200, "unknown", "--source-ip"},
		{"rbac off for the route", withFilters(t, rbac, map[string]proto.Message{"envoy.filters.http.rbac": &envoy_filter_http_rbac_v3.RBACPerRoute{}}), Request{URL: "http://example.com/", SourceIP: "192.0.2.1"}, KindDirect, 200, "skipped", "off"},
		{"jwt missing", withFilters(t, jwt, nil), Request{URL: "http://example.com/api"}, KindForbidden, 401, "applies", "no token"},
		{"jwt present", withFilters(t, jwt, nil), Request{URL: "http://example.com/api", Headers: []Header{{"Authorization", "Bearer x.y.z"}}}, KindDirect, 200, "applies", "header authorization"},
		{"jwt rule does not apply", withFilters(t, jwt, nil), Request{URL: "http://example.com/public"}, KindDirect, 200, "skipped", "no requirement"},
		{"cors preflight answered", withFilters(t, cors, corsPolicy), Request{URL: "http://example.com/", Method: "OPTIONS", Headers: []Header{{"Origin", "https://app.example.com"}, {"Access-Control-Request-Method", "POST"}}}, KindDirect, 200, "applies", "answers the preflight"},
		{"cors origin refused", withFilters(t, cors, corsPolicy), Request{URL: "http://example.com/", Headers: []Header{{"Origin", "https://evil.example"}}}, KindDirect, 200, "applies", "not allowed"},
		{"unknown filter is named", withFilters(t, unknown, nil), Request{URL: "http://example.com/"}, KindDirect, 200, "unknown", "acme.filters.http.magic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := explainOrFail(t, tc.res, tc.req)
			if r.Decision.Kind != tc.kind || r.Decision.Status != tc.status {
				t.Errorf("decision %s %d (%s), want %s %d", r.Decision.Kind, r.Decision.Status, r.Decision.Reason, tc.kind, tc.status)
			}
			if len(r.Policies) != 1 {
				t.Fatalf("policies %+v, want one", r.Policies)
			}
			p := r.Policies[0]
			if p.Effect != tc.effect || !strings.Contains(p.Detail+" "+r.Decision.Reason, tc.contains) {
				t.Errorf("policy %+v, want effect %q and %q in its detail", p, tc.effect, tc.contains)
			}
		})
	}
}

// TestWeightedClusters: a route split over a served and a missing cluster
// forwards, and says which share gets 503; all missing is a 503.
func TestWeightedClusters(t *testing.T) {
	split := func(names ...string) func(*envoy_config_route_v3.Route) {
		return func(rt *envoy_config_route_v3.Route) {
			wc := &envoy_config_route_v3.WeightedCluster{}
			for _, n := range names {
				wc.Clusters = append(wc.Clusters, &envoy_config_route_v3.WeightedCluster_ClusterWeight{Name: n, Weight: wrapperspb.UInt32(1)})
			}
			rt.Action = &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{
				ClusterSpecifier: &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: wc},
			}}
		}
	}
	res := withRoute(t, nil, nil, split("up", "gone"))
	res.Clusters["up"] = &envoy_config_cluster_v3.Cluster{Name: "up", LoadAssignment: &envoy_config_endpoint_v3.ClusterLoadAssignment{
		ClusterName: "up", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 1, 1, 1)},
	}}
	r := explainOrFail(t, res, Request{URL: "http://example.com/"})
	if r.Decision.Kind != KindForward || !strings.Contains(r.Decision.Reason, "50.0% of requests get 503") || !strings.Contains(r.Decision.Reason, "gone: cluster not served") {
		t.Errorf("half missing: %+v", r.Decision)
	}
	r = explainOrFail(t, withRoute(t, nil, nil, split("gone")), Request{URL: "http://example.com/"})
	if r.Decision.Kind != KindUnavailable || r.Decision.Status != 503 {
		t.Errorf("all missing: %+v", r.Decision)
	}
}
