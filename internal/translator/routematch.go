package translator

import (
	"cmp"
	"strings"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// routeMatch translates a route's path, header and query conditions.
func routeMatch(r *dag.Route) *envoy_config_route_v3.RouteMatch {
	// One allocation for the match and the prefix forms most routes use.
	b := &struct {
		m         envoy_config_route_v3.RouteMatch
		prefix    envoy_config_route_v3.RouteMatch_Prefix
		separated envoy_config_route_v3.RouteMatch_PathSeparatedPrefix
	}{}
	m := &b.m
	setPath(m, r.PathMatch, &b.prefix, &b.separated)
	for _, h := range r.HeaderMatches {
		m.Headers = append(m.Headers, headerMatcher(h))
	}
	for _, q := range r.QueryParamMatches {
		m.QueryParameters = append(m.QueryParameters, queryParamMatcher(q))
	}
	return m
}

// setPath maps a path condition. A prefix matches at segment
// boundaries ("/a" matches "/a" and "/a/b", not "/ab"), which is Envoy's
// path_separated_prefix; that field refuses a trailing "/", and a prefix
// that ends in one is a plain prefix anyway, as is the empty prefix.
// prefix and separated are where the two prefix forms are written.
func setPath(m *envoy_config_route_v3.RouteMatch, pm dag.PathMatch, prefix *envoy_config_route_v3.RouteMatch_Prefix, separated *envoy_config_route_v3.RouteMatch_PathSeparatedPrefix) {
	switch {
	case pm.Kind == dag.PathExact:
		m.PathSpecifier = &envoy_config_route_v3.RouteMatch_Path{Path: pm.Value}
	case pm.Kind == dag.PathRegex:
		m.PathSpecifier = &envoy_config_route_v3.RouteMatch_SafeRegex{SafeRegex: regex(pm.Value)}
	case pm.Value == "" || strings.HasSuffix(pm.Value, "/"):
		prefix.Prefix = cmp.Or(pm.Value, "/")
		m.PathSpecifier = prefix
	default:
		separated.PathSeparatedPrefix = pm.Value
		m.PathSpecifier = separated
	}
}

// headerMatcher maps one header condition. Present matches use
// present_match; every value match goes through string_match, the one
// form that carries ignore_case.
func headerMatcher(h dag.HeaderMatch) *envoy_config_route_v3.HeaderMatcher {
	m := &envoy_config_route_v3.HeaderMatcher{Name: h.Name, InvertMatch: h.Invert}
	if sm := stringMatcher(h.Kind, h.Value, h.IgnoreCase); sm != nil {
		m.HeaderMatchSpecifier = &envoy_config_route_v3.HeaderMatcher_StringMatch{StringMatch: sm}
	} else {
		m.HeaderMatchSpecifier = &envoy_config_route_v3.HeaderMatcher_PresentMatch{PresentMatch: true}
	}
	return m
}

// queryParamMatcher maps one query-parameter condition.
func queryParamMatcher(q dag.QueryParamMatch) *envoy_config_route_v3.QueryParameterMatcher {
	m := &envoy_config_route_v3.QueryParameterMatcher{Name: q.Name}
	if sm := stringMatcher(q.Kind, q.Value, q.IgnoreCase); sm != nil {
		m.QueryParameterMatchSpecifier = &envoy_config_route_v3.QueryParameterMatcher_StringMatch{StringMatch: sm}
	} else {
		m.QueryParameterMatchSpecifier = &envoy_config_route_v3.QueryParameterMatcher_PresentMatch{PresentMatch: true}
	}
	return m
}

// stringMatcher maps a value match, or returns nil for MatchPresent.
// ignore_case has no effect on regexes; a case-insensitive regex says so
// itself with (?i).
func stringMatcher(kind dag.StringMatchKind, value string, ignoreCase bool) *envoy_type_matcher_v3.StringMatcher {
	sm := &envoy_type_matcher_v3.StringMatcher{IgnoreCase: ignoreCase}
	switch kind {
	case dag.MatchExact:
		sm.MatchPattern = &envoy_type_matcher_v3.StringMatcher_Exact{Exact: value}
	case dag.MatchPrefix:
		sm.MatchPattern = &envoy_type_matcher_v3.StringMatcher_Prefix{Prefix: value}
	case dag.MatchContains:
		sm.MatchPattern = &envoy_type_matcher_v3.StringMatcher_Contains{Contains: value}
	case dag.MatchRegex:
		sm.IgnoreCase = false
		sm.MatchPattern = &envoy_type_matcher_v3.StringMatcher_SafeRegex{SafeRegex: regex(value)}
	default:
		return nil
	}
	return sm
}

// regex builds an RE2 matcher. The engine is left unset: RE2 is the
// default, and the google_re2 field is deprecated, which makes Envoy log a
// deprecation warning for every route that sets it.
func regex(expr string) *envoy_type_matcher_v3.RegexMatcher {
	return &envoy_type_matcher_v3.RegexMatcher{Regex: expr}
}
