package explain

import (
	"testing"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestMatchEdges covers the corners of Envoy's matchers that the golden
// inputs do not reach.
func TestMatchEdges(t *testing.T) {
	exact := func(v string) *envoy_config_route_v3.HeaderMatcher_StringMatch {
		return &envoy_config_route_v3.HeaderMatcher_StringMatch{StringMatch: &envoy_type_matcher_v3.StringMatcher{MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: v}}}
	}
	prefix := func(p string) *envoy_config_route_v3.RouteMatch {
		return &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: p}}
	}
	for _, tc := range []struct {
		name    string
		match   *envoy_config_route_v3.RouteMatch
		url     string
		headers []Header
		want    bool
	}{
		{"present_match false matches an absent header", &envoy_config_route_v3.RouteMatch{PathSpecifier: prefix("/").PathSpecifier, Headers: []*envoy_config_route_v3.HeaderMatcher{
			{Name: "x-a", HeaderMatchSpecifier: &envoy_config_route_v3.HeaderMatcher_PresentMatch{PresentMatch: false}}}}, "http://h/", nil, true},
		{"treat_missing_header_as_empty lets an inverted matcher match", &envoy_config_route_v3.RouteMatch{PathSpecifier: prefix("/").PathSpecifier, Headers: []*envoy_config_route_v3.HeaderMatcher{
			{Name: "x-env", HeaderMatchSpecifier: exact("prod"), InvertMatch: true, TreatMissingHeaderAsEmpty: true}}}, "http://h/", nil, true},
		{"several values are joined with commas", &envoy_config_route_v3.RouteMatch{PathSpecifier: prefix("/").PathSpecifier, Headers: []*envoy_config_route_v3.HeaderMatcher{
			{Name: "x-a", HeaderMatchSpecifier: exact("1,2")}}}, "http://h/", []Header{{"X-A", "1"}, {"x-a", "2"}}, true},
		{"header names ignore case", &envoy_config_route_v3.RouteMatch{PathSpecifier: prefix("/").PathSpecifier, Headers: []*envoy_config_route_v3.HeaderMatcher{
			{Name: "X-Canary", HeaderMatchSpecifier: exact("1")}}}, "http://h/", []Header{{"x-canary", "1"}}, true},
		{"prefix is case-sensitive by default", prefix("/API"), "http://h/api", nil, false},
		{"case_sensitive false", &envoy_config_route_v3.RouteMatch{PathSpecifier: prefix("/API").PathSpecifier, CaseSensitive: wrapperspb.Bool(false)}, "http://h/api/x", nil, true},
		{"prefix sees the query string", prefix("/a?b"), "http://h/a?b=1", nil, true},
		{"exact path ignores the query string", &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Path{Path: "/a"}}, "http://h/a?b=1", nil, true},
		{"present_match false on a query parameter", &envoy_config_route_v3.RouteMatch{PathSpecifier: prefix("/").PathSpecifier, QueryParameters: []*envoy_config_route_v3.QueryParameterMatcher{
			{Name: "debug", QueryParameterMatchSpecifier: &envoy_config_route_v3.QueryParameterMatcher_PresentMatch{PresentMatch: false}}}}, "http://h/?x=1", nil, true},
		{"pseudo-header :method", &envoy_config_route_v3.RouteMatch{PathSpecifier: prefix("/").PathSpecifier, Headers: []*envoy_config_route_v3.HeaderMatcher{
			{Name: ":method", HeaderMatchSpecifier: exact("POST")}}}, "http://h/", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := normalize(Request{URL: tc.url, Headers: tc.headers})
			if err != nil {
				t.Fatal(err)
			}
			if got, why := matchRoute(tc.match, r); got != tc.want {
				t.Errorf("matched = %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}
