package explain

import (
	"fmt"
	"strings"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

// describeMatch prints a route's match in one line, in the words of the
// proto's fields.
func describeMatch(m *envoy_config_route_v3.RouteMatch) string {
	var parts []string
	switch ps := m.GetPathSpecifier().(type) {
	case *envoy_config_route_v3.RouteMatch_Prefix:
		parts = append(parts, fmt.Sprintf("prefix %q", ps.Prefix))
	case *envoy_config_route_v3.RouteMatch_Path:
		parts = append(parts, fmt.Sprintf("path %q", ps.Path))
	case *envoy_config_route_v3.RouteMatch_PathSeparatedPrefix:
		parts = append(parts, fmt.Sprintf("path_separated_prefix %q", ps.PathSeparatedPrefix))
	case *envoy_config_route_v3.RouteMatch_SafeRegex:
		parts = append(parts, fmt.Sprintf("safe_regex %q", ps.SafeRegex.GetRegex()))
	}
	if cs := m.GetCaseSensitive(); cs != nil && !cs.GetValue() {
		parts = append(parts, "case-insensitive")
	}
	for _, h := range m.GetHeaders() {
		parts = append(parts, fmt.Sprintf("header %s %s", strings.ToLower(h.GetName()), describeHeader(h)))
	}
	for _, q := range m.GetQueryParameters() {
		if pm, ok := q.GetQueryParameterMatchSpecifier().(*envoy_config_route_v3.QueryParameterMatcher_PresentMatch); ok {
			parts = append(parts, fmt.Sprintf("query %s %s", q.GetName(), map[bool]string{true: "present", false: "absent"}[pm.PresentMatch]))
			continue
		}
		parts = append(parts, fmt.Sprintf("query %s %s", q.GetName(), describeString(q.GetStringMatch())))
	}
	return strings.Join(parts, ", ")
}

//nolint:staticcheck // the deprecated matcher forms are valid xDS that a served config may hold
func describeHeader(h *envoy_config_route_v3.HeaderMatcher) string {
	not := ""
	if h.GetInvertMatch() {
		not = "not "
	}
	switch s := h.GetHeaderMatchSpecifier().(type) {
	case *envoy_config_route_v3.HeaderMatcher_PresentMatch:
		if s.PresentMatch != h.GetInvertMatch() {
			return "present"
		}
		return "absent"
	case *envoy_config_route_v3.HeaderMatcher_StringMatch:
		return not + describeString(s.StringMatch)
	case *envoy_config_route_v3.HeaderMatcher_ExactMatch:
		return not + fmt.Sprintf("exact %q", s.ExactMatch)
	case *envoy_config_route_v3.HeaderMatcher_PrefixMatch:
		return not + fmt.Sprintf("prefix %q", s.PrefixMatch)
	case *envoy_config_route_v3.HeaderMatcher_SuffixMatch:
		return not + fmt.Sprintf("suffix %q", s.SuffixMatch)
	case *envoy_config_route_v3.HeaderMatcher_ContainsMatch:
		return not + fmt.Sprintf("contains %q", s.ContainsMatch)
	case *envoy_config_route_v3.HeaderMatcher_SafeRegexMatch:
		return not + fmt.Sprintf("regex %q", s.SafeRegexMatch.GetRegex())
	case *envoy_config_route_v3.HeaderMatcher_RangeMatch:
		return not + fmt.Sprintf("in [%d, %d)", s.RangeMatch.GetStart(), s.RangeMatch.GetEnd())
	}
	return not + "any value"
}

func describeString(m *envoy_type_matcher_v3.StringMatcher) string {
	var d string
	switch p := m.GetMatchPattern().(type) {
	case *envoy_type_matcher_v3.StringMatcher_Exact:
		d = fmt.Sprintf("exact %q", p.Exact)
	case *envoy_type_matcher_v3.StringMatcher_Prefix:
		d = fmt.Sprintf("prefix %q", p.Prefix)
	case *envoy_type_matcher_v3.StringMatcher_Suffix:
		d = fmt.Sprintf("suffix %q", p.Suffix)
	case *envoy_type_matcher_v3.StringMatcher_Contains:
		d = fmt.Sprintf("contains %q", p.Contains)
	case *envoy_type_matcher_v3.StringMatcher_SafeRegex:
		return fmt.Sprintf("regex %q", p.SafeRegex.GetRegex())
	default:
		return "an unknown string matcher"
	}
	if m.GetIgnoreCase() {
		d += " (ignoring case)"
	}
	return d
}

// describeAction prints what a route does, in one line.
func describeAction(rt *envoy_config_route_v3.Route) string {
	switch a := rt.GetAction().(type) {
	case *envoy_config_route_v3.Route_Route:
		switch c := a.Route.GetClusterSpecifier().(type) {
		case *envoy_config_route_v3.RouteAction_Cluster:
			return "forward to cluster " + c.Cluster
		case *envoy_config_route_v3.RouteAction_WeightedClusters:
			var names []string
			for _, wc := range c.WeightedClusters.GetClusters() {
				names = append(names, fmt.Sprintf("%s (weight %d)", wc.GetName(), wc.GetWeight().GetValue()))
			}
			return "forward to " + strings.Join(names, ", ")
		case *envoy_config_route_v3.RouteAction_ClusterHeader:
			return "forward to the cluster named by header " + c.ClusterHeader
		}
		return "forward"
	case *envoy_config_route_v3.Route_Redirect:
		return "redirect"
	case *envoy_config_route_v3.Route_DirectResponse:
		return fmt.Sprintf("answer %d", a.DirectResponse.GetStatus())
	case *envoy_config_route_v3.Route_NonForwardingAction:
		return "no forwarding (filters answer)"
	}
	return "no action"
}
