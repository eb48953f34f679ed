package translator

import (
	"testing"
	"time"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_ext_authz_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// forward is a route to cluster "c" under prefix "/".
func forward(mod func(*dag.Route)) *dag.Route {
	r := &dag.Route{PathMatch: dag.PathMatch{Value: "/"}, Forward: &dag.Forward{Cluster: testCluster("c")}}
	if mod != nil {
		mod(r)
	}
	return r
}

func prefixMatch(p string) *envoy_config_route_v3.RouteMatch {
	return &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: p}}
}

func toC(mod func(*envoy_config_route_v3.RouteAction)) *envoy_config_route_v3.Route_Route {
	a := &envoy_config_route_v3.RouteAction{ClusterSpecifier: &envoy_config_route_v3.RouteAction_Cluster{Cluster: "c"}}
	if mod != nil {
		mod(a)
	}
	return &envoy_config_route_v3.Route_Route{Route: a}
}

func setHeader(name, value string) *envoy_config_core_v3.HeaderValueOption {
	return &envoy_config_core_v3.HeaderValueOption{
		Header:       &envoy_config_core_v3.HeaderValue{Key: name, Value: value},
		AppendAction: envoy_config_core_v3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

func TestRouteMatch(t *testing.T) {
	str := func(sm *envoy_type_matcher_v3.StringMatcher) *envoy_config_route_v3.HeaderMatcher_StringMatch {
		return &envoy_config_route_v3.HeaderMatcher_StringMatch{StringMatch: sm}
	}
	tests := map[string]struct {
		in   dag.Route
		want *envoy_config_route_v3.RouteMatch
	}{
		"prefix /": {
			in:   dag.Route{PathMatch: dag.PathMatch{Kind: dag.PathPrefix, Value: "/"}},
			want: prefixMatch("/"),
		},
		"empty prefix is /": {
			in:   dag.Route{},
			want: prefixMatch("/"),
		},
		"prefix ending in / is a plain prefix": {
			in:   dag.Route{PathMatch: dag.PathMatch{Value: "/api/"}},
			want: prefixMatch("/api/"),
		},
		"other prefixes match whole segments": {
			in: dag.Route{PathMatch: dag.PathMatch{Value: "/api"}},
			want: &envoy_config_route_v3.RouteMatch{
				PathSpecifier: &envoy_config_route_v3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: "/api"},
			},
		},
		"exact": {
			in:   dag.Route{PathMatch: dag.PathMatch{Kind: dag.PathExact, Value: "/login"}},
			want: &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Path{Path: "/login"}},
		},
		"regex": {
			in: dag.Route{PathMatch: dag.PathMatch{Kind: dag.PathRegex, Value: "/v[0-9]+/.*"}},
			want: &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_SafeRegex{
				SafeRegex: &envoy_type_matcher_v3.RegexMatcher{Regex: "/v[0-9]+/.*"},
			}},
		},
		"headers": {
			in: dag.Route{HeaderMatches: []dag.HeaderMatch{
				{Name: "x-present", Kind: dag.MatchPresent},
				{Name: "x-absent", Kind: dag.MatchPresent, Invert: true},
				{Name: "x-exact", Kind: dag.MatchExact, Value: "v", IgnoreCase: true},
				{Name: "x-prefix", Kind: dag.MatchPrefix, Value: "p"},
				{Name: "x-contains", Kind: dag.MatchContains, Value: "c", Invert: true},
				{Name: "x-regex", Kind: dag.MatchRegex, Value: "a.*", IgnoreCase: true},
			}},
			want: &envoy_config_route_v3.RouteMatch{
				PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"},
				Headers: []*envoy_config_route_v3.HeaderMatcher{
					{Name: "x-present", HeaderMatchSpecifier: &envoy_config_route_v3.HeaderMatcher_PresentMatch{PresentMatch: true}},
					{Name: "x-absent", HeaderMatchSpecifier: &envoy_config_route_v3.HeaderMatcher_PresentMatch{PresentMatch: true}, InvertMatch: true},
					{Name: "x-exact", HeaderMatchSpecifier: str(&envoy_type_matcher_v3.StringMatcher{
						MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: "v"}, IgnoreCase: true,
					})},
					{Name: "x-prefix", HeaderMatchSpecifier: str(&envoy_type_matcher_v3.StringMatcher{
						MatchPattern: &envoy_type_matcher_v3.StringMatcher_Prefix{Prefix: "p"},
					})},
					{Name: "x-contains", InvertMatch: true, HeaderMatchSpecifier: str(&envoy_type_matcher_v3.StringMatcher{
						MatchPattern: &envoy_type_matcher_v3.StringMatcher_Contains{Contains: "c"},
					})},
					// ignore_case has no effect on regexes and is not sent.
					{Name: "x-regex", HeaderMatchSpecifier: str(&envoy_type_matcher_v3.StringMatcher{
						MatchPattern: &envoy_type_matcher_v3.StringMatcher_SafeRegex{SafeRegex: &envoy_type_matcher_v3.RegexMatcher{Regex: "a.*"}},
					})},
				},
			},
		},
		"query parameters": {
			in: dag.Route{QueryParamMatches: []dag.QueryParamMatch{
				{Name: "debug", Kind: dag.MatchPresent},
				{Name: "v", Kind: dag.MatchExact, Value: "2", IgnoreCase: true},
			}},
			want: &envoy_config_route_v3.RouteMatch{
				PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"},
				QueryParameters: []*envoy_config_route_v3.QueryParameterMatcher{
					{Name: "debug", QueryParameterMatchSpecifier: &envoy_config_route_v3.QueryParameterMatcher_PresentMatch{PresentMatch: true}},
					{Name: "v", QueryParameterMatchSpecifier: &envoy_config_route_v3.QueryParameterMatcher_StringMatch{
						StringMatch: &envoy_type_matcher_v3.StringMatcher{MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: "2"}, IgnoreCase: true},
					}},
				},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := routeMatch(&tc.in)
			if d := diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if err := got.ValidateAll(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestRouteActions(t *testing.T) {
	clusterA, clusterB, mirror := testCluster("a"), testCluster("b"), testCluster("m")
	tests := map[string]struct {
		in   *dag.Route
		want *envoy_config_route_v3.Route
	}{
		"forward to one cluster, Envoy's default timeout": {
			in:   forward(func(r *dag.Route) { r.Name = "home" }),
			want: &envoy_config_route_v3.Route{Name: "home", Match: prefixMatch("/"), Action: toC(nil)},
		},
		"timeouts: zero disables, set values pass through": {
			in: forward(func(r *dag.Route) { r.ResponseTimeout, r.IdleTimeout = dur(0), dur(90*time.Second) }),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.Timeout, a.IdleTimeout = durationpb.New(0), durationpb.New(90*time.Second)
			})},
		},
		"weighted clusters with per-service headers": {
			in: &dag.Route{Forward: &dag.Forward{Weighted: []dag.WeightedCluster{
				{Cluster: clusterA, Weight: 90, RequestHeaders: &dag.HeadersPolicy{Set: []dag.HeaderValue{{Name: "x-svc", Value: "a"}}}, HostRewrite: "a.internal"},
				{Cluster: clusterB, Weight: 10, ResponseHeaders: &dag.HeadersPolicy{Remove: []string{"server"}}},
			}}},
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{
				ClusterSpecifier: &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: &envoy_config_route_v3.WeightedCluster{
					Clusters: []*envoy_config_route_v3.WeightedCluster_ClusterWeight{
						{
							Name: "a", Weight: wrapperspb.UInt32(90),
							RequestHeadersToAdd:  []*envoy_config_core_v3.HeaderValueOption{setHeader("x-svc", "a")},
							HostRewriteSpecifier: &envoy_config_route_v3.WeightedCluster_ClusterWeight_HostRewriteLiteral{HostRewriteLiteral: "a.internal"},
						},
						{Name: "b", Weight: wrapperspb.UInt32(10), ResponseHeadersToRemove: []string{"server"}},
					},
				}},
			}}},
		},
		"mirrors: percent 0 is left out": {
			in: forward(func(r *dag.Route) {
				r.Forward.Mirrors = []dag.Mirror{{Cluster: mirror, Percent: 0}, {Cluster: mirror, Percent: 25}}
			}),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.RequestMirrorPolicies = []*envoy_config_route_v3.RouteAction_RequestMirrorPolicy{{
					Cluster: "m",
					RuntimeFraction: &envoy_config_core_v3.RuntimeFractionalPercent{DefaultValue: &envoy_type_v3.FractionalPercent{
						Numerator: 25, Denominator: envoy_type_v3.FractionalPercent_HUNDRED,
					}},
				}}
			})},
		},
		"retry policy": {
			in: forward(func(r *dag.Route) {
				r.Retry = &dag.Retry{Count: 3, PerTryTimeout: dur(time.Second), RetryOn: []string{"gateway-error", "retriable-status-codes"}, RetriableStatusCodes: []uint32{503}}
			}),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.RetryPolicy = &envoy_config_route_v3.RetryPolicy{
					RetryOn:              "gateway-error,retriable-status-codes",
					NumRetries:           wrapperspb.UInt32(3),
					PerTryTimeout:        durationpb.New(time.Second),
					RetriableStatusCodes: []uint32{503},
				}
			})},
		},
		"retry count 0 means no retries: no policy": {
			in:   forward(func(r *dag.Route) { r.Retry = &dag.Retry{Count: 0, RetryOn: []string{"5xx"}} }),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(nil)},
		},
		"retry without conditions defaults to 5xx": {
			in: forward(func(r *dag.Route) { r.Retry = &dag.Retry{Count: 1} }),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.RetryPolicy = &envoy_config_route_v3.RetryPolicy{RetryOn: "5xx", NumRetries: wrapperspb.UInt32(1)}
			})},
		},
		"prefix rewrite, websocket, hash policies": {
			in: forward(func(r *dag.Route) {
				r.PrefixRewrite, r.Websocket = "/v2/", true
				r.HashPolicies = []dag.HashPolicy{
					{Header: "x-user", Terminal: true}, {QueryParameter: "id"}, {SourceIP: true}, {Cookie: "session"}, {},
				}
			}),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.PrefixRewrite = "/v2/"
				a.UpgradeConfigs = []*envoy_config_route_v3.RouteAction_UpgradeConfig{{UpgradeType: "websocket", Enabled: wrapperspb.Bool(true)}}
				a.HashPolicy = []*envoy_config_route_v3.RouteAction_HashPolicy{
					{Terminal: true, PolicySpecifier: &envoy_config_route_v3.RouteAction_HashPolicy_Header_{
						Header: &envoy_config_route_v3.RouteAction_HashPolicy_Header{HeaderName: "x-user"},
					}},
					{PolicySpecifier: &envoy_config_route_v3.RouteAction_HashPolicy_QueryParameter_{
						QueryParameter: &envoy_config_route_v3.RouteAction_HashPolicy_QueryParameter{Name: "id"},
					}},
					{PolicySpecifier: &envoy_config_route_v3.RouteAction_HashPolicy_ConnectionProperties_{
						ConnectionProperties: &envoy_config_route_v3.RouteAction_HashPolicy_ConnectionProperties{SourceIp: true},
					}},
					{PolicySpecifier: &envoy_config_route_v3.RouteAction_HashPolicy_Cookie_{
						Cookie: &envoy_config_route_v3.RouteAction_HashPolicy_Cookie{Name: "session", Ttl: durationpb.New(0), Path: "/"},
					}},
				}
			})},
		},
		"headers: host becomes a host rewrite, pseudo-headers are dropped": {
			in: forward(func(r *dag.Route) {
				r.RequestHeaders = &dag.HeadersPolicy{
					Set:    []dag.HeaderValue{{Name: "Host", Value: "ignored.internal"}, {Name: ":path", Value: "/x"}, {Name: "x-a", Value: "1"}},
					Remove: []string{"host", "x-b"},
				}
				r.HostRewrite = "api.internal"
				r.ResponseHeaders = &dag.HeadersPolicy{Set: []dag.HeaderValue{{Name: "x-c", Value: "3"}}, Remove: []string{"x-d"}}
			}),
			want: &envoy_config_route_v3.Route{
				Match: prefixMatch("/"),
				Action: toC(func(a *envoy_config_route_v3.RouteAction) {
					a.HostRewriteSpecifier = &envoy_config_route_v3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: "api.internal"}
				}),
				RequestHeadersToAdd:     []*envoy_config_core_v3.HeaderValueOption{setHeader("x-a", "1")},
				RequestHeadersToRemove:  []string{"x-b"},
				ResponseHeadersToAdd:    []*envoy_config_core_v3.HeaderValueOption{setHeader("x-c", "3")},
				ResponseHeadersToRemove: []string{"x-d"},
			},
		},
		"host header without HostRewrite still rewrites": {
			in: forward(func(r *dag.Route) {
				r.RequestHeaders = &dag.HeadersPolicy{Set: []dag.HeaderValue{{Name: "host", Value: "b.internal"}}}
			}),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.HostRewriteSpecifier = &envoy_config_route_v3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: "b.internal"}
			})},
		},
		"forward with no backend left answers 503": {
			in: &dag.Route{Forward: &dag.Forward{}},
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: &envoy_config_route_v3.Route_DirectResponse{
				DirectResponse: &envoy_config_route_v3.DirectResponseAction{Status: 503},
			}},
		},
		"redirect": {
			in: &dag.Route{Redirect: &dag.Redirect{Scheme: "https", Hostname: "b.com", Port: 8443, StatusCode: 302, Path: "/new"}},
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: &envoy_config_route_v3.Route_Redirect{Redirect: &envoy_config_route_v3.RedirectAction{
				SchemeRewriteSpecifier: &envoy_config_route_v3.RedirectAction_SchemeRedirect{SchemeRedirect: "https"},
				HostRedirect:           "b.com",
				PortRedirect:           8443,
				PathRewriteSpecifier:   &envoy_config_route_v3.RedirectAction_PathRedirect{PathRedirect: "/new"},
				ResponseCode:           envoy_config_route_v3.RedirectAction_FOUND,
			}}},
		},
		"redirect with prefix rewrite and default code": {
			in: &dag.Route{Redirect: &dag.Redirect{Prefix: "/v2"}},
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: &envoy_config_route_v3.Route_Redirect{Redirect: &envoy_config_route_v3.RedirectAction{
				PathRewriteSpecifier: &envoy_config_route_v3.RedirectAction_PrefixRewrite{PrefixRewrite: "/v2"},
			}}},
		},
		"direct response": {
			in: &dag.Route{DirectResponse: &dag.DirectResponse{StatusCode: 418, Body: "teapot"}},
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: &envoy_config_route_v3.Route_DirectResponse{DirectResponse: &envoy_config_route_v3.DirectResponseAction{
				Status: 418,
				Body:   &envoy_config_core_v3.DataSource{Specifier: &envoy_config_core_v3.DataSource_InlineString{InlineString: "teapot"}},
			}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rc := HTTPRouteConfig(&dag.VirtualHost{FQDN: "a.com", Routes: []*dag.Route{tc.in}})
			validateAll(t, &Resources{Routes: []*envoy_config_route_v3.RouteConfiguration{rc}})
			if d := diff([]*envoy_config_route_v3.Route{tc.want}, rc.GetVirtualHosts()[0].GetRoutes()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestRedirectCodes(t *testing.T) {
	for code, want := range map[uint32]envoy_config_route_v3.RedirectAction_RedirectResponseCode{
		0:   envoy_config_route_v3.RedirectAction_MOVED_PERMANENTLY,
		301: envoy_config_route_v3.RedirectAction_MOVED_PERMANENTLY,
		302: envoy_config_route_v3.RedirectAction_FOUND,
		303: envoy_config_route_v3.RedirectAction_SEE_OTHER,
		307: envoy_config_route_v3.RedirectAction_TEMPORARY_REDIRECT,
		308: envoy_config_route_v3.RedirectAction_PERMANENT_REDIRECT,
	} {
		if got := redirectCode(code); got != want {
			t.Errorf("redirectCode(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestHTTPRouteConfig(t *testing.T) {
	secure := forward(func(r *dag.Route) { r.Name = "secure"; r.HTTPSRedirect = true; r.Websocket = true })
	vh := &dag.VirtualHost{FQDN: "a.com", Routes: []*dag.Route{secure, nil, {Name: "no action"}}}
	want := &envoy_config_route_v3.RouteConfiguration{
		Name: "http/a.com",
		// The scope key is Switchyard's, not the backend's business.
		RequestHeadersToRemove: []string{"x-switchyard-host-scope"},
		VirtualHosts: []*envoy_config_route_v3.VirtualHost{{
			Name:    "a.com",
			Domains: []string{"a.com", "a.com:*"},
			Routes: []*envoy_config_route_v3.Route{{
				Name:  "secure",
				Match: prefixMatch("/"),
				Action: &envoy_config_route_v3.Route_Redirect{Redirect: &envoy_config_route_v3.RedirectAction{
					SchemeRewriteSpecifier: &envoy_config_route_v3.RedirectAction_HttpsRedirect{HttpsRedirect: true},
				}},
			}},
		}},
	}
	got := HTTPRouteConfig(vh)
	if d := diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestHTTPSRouteConfig(t *testing.T) {
	perRoute := func(cfg *envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute) map[string]*anypb.Any {
		return map[string]*anypb.Any{"envoy.filters.http.ext_authz": toAny(cfg)}
	}
	checkSettings := func(ctx map[string]string) *envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute {
		return &envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute{Override: &envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute_CheckSettings{
			CheckSettings: &envoy_filter_http_ext_authz_v3.CheckSettings{ContextExtensions: ctx},
		}}
	}
	routes := []*dag.Route{
		// HTTPSRedirect is for the plain-HTTP copy only.
		forward(func(r *dag.Route) {
			r.Name = "ctx"
			r.HTTPSRedirect = true
			r.AuthContext = map[string]string{"k": "route"}
		}),
		forward(func(r *dag.Route) { r.Name = "off"; r.AuthDisabled = true }),
		forward(func(r *dag.Route) { r.Name = "inherit" }),
	}
	tests := map[string]struct {
		in   *dag.SecureVirtualHost
		want *envoy_config_route_v3.RouteConfiguration
	}{
		"without authorization": {
			in: &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: "a.com", Routes: routes[:1]}},
			want: &envoy_config_route_v3.RouteConfiguration{
				Name: "https/a.com",
				VirtualHosts: []*envoy_config_route_v3.VirtualHost{{
					Name: "a.com", Domains: []string{"a.com", "a.com:*"},
					Routes: []*envoy_config_route_v3.Route{{Name: "ctx", Match: prefixMatch("/"), Action: toC(nil)}},
				}},
			},
		},
		"with authorization": {
			in: &dag.SecureVirtualHost{
				VirtualHost:   dag.VirtualHost{FQDN: "a.com", Routes: routes},
				Authorization: &dag.Authorization{Cluster: testCluster("authz"), Context: map[string]string{"k": "host"}},
			},
			want: &envoy_config_route_v3.RouteConfiguration{
				Name: "https/a.com",
				VirtualHosts: []*envoy_config_route_v3.VirtualHost{{
					Name: "a.com", Domains: []string{"a.com", "a.com:*"},
					Routes: []*envoy_config_route_v3.Route{
						{Name: "ctx", Match: prefixMatch("/"), Action: toC(nil), TypedPerFilterConfig: perRoute(checkSettings(map[string]string{"k": "route"}))},
						{Name: "off", Match: prefixMatch("/"), Action: toC(nil), TypedPerFilterConfig: perRoute(&envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute{
							Override: &envoy_filter_http_ext_authz_v3.ExtAuthzPerRoute_Disabled{Disabled: true},
						})},
						{Name: "inherit", Match: prefixMatch("/"), Action: toC(nil)},
					},
					TypedPerFilterConfig: perRoute(checkSettings(map[string]string{"k": "host"})),
				}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := HTTPSRouteConfig(tc.in)
			if d := diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			validateAll(t, &Resources{Routes: []*envoy_config_route_v3.RouteConfiguration{got}})
		})
	}

	for name, svh := range map[string]*dag.SecureVirtualHost{
		"tcp proxy":   {VirtualHost: dag.VirtualHost{FQDN: "a.com"}, TCPProxy: &dag.TCPProxy{}},
		"passthrough": {VirtualHost: dag.VirtualHost{FQDN: "a.com"}, Passthrough: true},
	} {
		if rc := HTTPSRouteConfig(svh); rc != nil {
			t.Errorf("%s: want no route configuration, got %v", name, rc)
		}
	}
}

func TestScopedRoute(t *testing.T) {
	want := &envoy_config_route_v3.ScopedRouteConfiguration{
		Name:                   "http/a.example.com",
		RouteConfigurationName: "http/a.example.com",
		Key: &envoy_config_route_v3.ScopedRouteConfiguration_Key{
			Fragments: []*envoy_config_route_v3.ScopedRouteConfiguration_Key_Fragment{{
				Type: &envoy_config_route_v3.ScopedRouteConfiguration_Key_Fragment_StringKey{StringKey: "a.example.com"},
			}},
		},
	}
	got := ScopedRoute(&dag.VirtualHost{FQDN: "a.example.com"})
	if d := diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if err := got.ValidateAll(); err != nil {
		t.Error(err)
	}
}
