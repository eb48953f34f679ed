package explain

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/switchyard-dev/switchyard/internal/translator"
)

// matchRoutes tries the routes in order, as Envoy does, recording why
// each one before the match did not match. It returns the first that
// matches, nil for none.
func (w *walk) matchRoutes(vh *envoy_config_route_v3.VirtualHost) *envoy_config_route_v3.Route {
	for i, rt := range vh.GetRoutes() {
		ok, why := matchRoute(rt.GetMatch(), w.req)
		w.out.Routes = append(w.out.Routes, RouteCheck{
			Index: i, Name: rt.GetName(), Match: describeMatch(rt.GetMatch()), Matched: ok, Why: why,
			Action: describeAction(rt), Owner: w.owner(rt.GetMetadata()),
		})
		if ok {
			return rt
		}
	}
	return nil
}

// owner reads the HTTPProxy (and route index) the translator records in
// metadata, nil when there is none.
func (w *walk) owner(md *envoy_config_core_v3.Metadata) *Owner {
	proxy, idx := translator.MetadataOwner(md)
	if proxy == "" {
		return nil
	}
	o := &Owner{HTTPProxy: proxy}
	if idx >= 0 {
		o.Field = fmt.Sprintf("spec.routes[%d]", idx)
	}
	o.Problems = relevant(w.res.Problems[proxy], o.Field)
	return o
}

// relevant keeps the problems about a route's own fields, and those about
// the proxy as a whole (not about another route): the status of a proxy
// with many routes lists every route's mistakes.
func relevant(problems []string, field string) []string {
	if field == "" {
		return problems
	}
	var out []string
	for _, p := range problems {
		if strings.HasPrefix(p, field+".") || strings.HasPrefix(p, field+":") || strings.HasPrefix(p, field+"[") || !strings.HasPrefix(p, "spec.routes[") {
			out = append(out, p)
		}
	}
	return out
}

// matchRoute applies one route's match to the request: path (with its
// case sensitivity), then headers, then query parameters, as Envoy does.
// It returns whether it matched and why: the first condition that failed,
// or the conditions that held.
func matchRoute(m *envoy_config_route_v3.RouteMatch, r *request) (bool, string) {
	ok, why := matchPath(m, r)
	if !ok {
		return false, why
	}
	whys := []string{why}
	for _, h := range m.GetHeaders() {
		ok, why := matchHeader(h, r)
		if !ok {
			return false, why
		}
		whys = append(whys, why)
	}
	for _, q := range m.GetQueryParameters() {
		ok, why := matchQuery(q, r)
		if !ok {
			return false, why
		}
		whys = append(whys, why)
	}
	if m.GetGrpc() != nil {
		if ct, _ := r.header("content-type"); !strings.HasPrefix(ct, "application/grpc") {
			return false, "the route matches only gRPC requests (content-type application/grpc)"
		}
	}
	if m.GetRuntimeFraction() != nil || len(m.GetDynamicMetadata()) > 0 || m.GetTlsContext() != nil || m.GetFilterState() != nil {
		whys = append(whys, "the route also matches on runtime, metadata, filter state or TLS context, which explain takes to hold")
	}
	return true, strings.Join(whys, "; ")
}

// matchPath applies the path specifier. Only prefix sees the query string:
// path, path_separated_prefix and safe_regex compare the path without it.
func matchPath(m *envoy_config_route_v3.RouteMatch, r *request) (bool, string) {
	full := r.Path
	bare, _, _ := strings.Cut(full, "?")
	fold := m.GetCaseSensitive() != nil && !m.GetCaseSensitive().GetValue()
	eq := func(a, b string) bool { return a == b || fold && strings.EqualFold(a, b) }
	hasPrefix := func(s, p string) bool { return len(s) >= len(p) && eq(s[:len(p)], p) }
	switch ps := m.GetPathSpecifier().(type) {
	case *envoy_config_route_v3.RouteMatch_Prefix:
		if hasPrefix(full, ps.Prefix) {
			return true, fmt.Sprintf("path %q starts with %q", full, ps.Prefix)
		}
		return false, fmt.Sprintf("path %q does not start with %q", full, ps.Prefix)
	case *envoy_config_route_v3.RouteMatch_Path:
		if eq(bare, ps.Path) {
			return true, fmt.Sprintf("path %q is %q", bare, ps.Path)
		}
		return false, fmt.Sprintf("path %q is not %q", bare, ps.Path)
	case *envoy_config_route_v3.RouteMatch_PathSeparatedPrefix:
		p := ps.PathSeparatedPrefix
		if hasPrefix(bare, p) && (len(bare) == len(p) || bare[len(p)] == '/') {
			return true, fmt.Sprintf("path %q is %q or below it", bare, p)
		}
		if hasPrefix(bare, p) {
			return false, fmt.Sprintf("path %q starts with %q but not at a segment boundary (%q matches %s and %s/...)", bare, p, p, p, p)
		}
		return false, fmt.Sprintf("path %q is not %q or below it", bare, p)
	case *envoy_config_route_v3.RouteMatch_SafeRegex:
		ok, err := fullMatch(ps.SafeRegex.GetRegex(), bare)
		if err != nil {
			return false, fmt.Sprintf("regex %q does not compile: %v", ps.SafeRegex.GetRegex(), err)
		}
		if ok {
			return true, fmt.Sprintf("path %q matches regex %q", bare, ps.SafeRegex.GetRegex())
		}
		return false, fmt.Sprintf("path %q does not match regex %q (the whole path must match)", bare, ps.SafeRegex.GetRegex())
	case nil:
		return false, "the route has no path specifier"
	default:
		return false, fmt.Sprintf("explain does not evaluate %T; taken not to match", ps)
	}
}

// fullMatch is RE2's full match, which is what Envoy's safe_regex does:
// Go's regexp is RE2, anchored here at both ends.
func fullMatch(expr, s string) (bool, error) {
	re, err := regexp.Compile(`^(?:` + expr + `)$`)
	if err != nil {
		return false, err
	}
	return re.MatchString(s), nil
}

// matchHeader applies a header matcher the way Envoy does. An absent
// header matches only "present_match: false" (or an inverted
// "present_match: true"); a value matcher, inverted or not, never matches
// an absent header unless treat_missing_header_as_empty is set. Several
// values of one header are matched joined with ",".
func matchHeader(h *envoy_config_route_v3.HeaderMatcher, r *request) (bool, string) {
	name := strings.ToLower(h.GetName())
	v, present := r.header(name)
	desc := describeHeader(h)
	if pm, ok := h.GetHeaderMatchSpecifier().(*envoy_config_route_v3.HeaderMatcher_PresentMatch); ok {
		if (present == pm.PresentMatch) != h.GetInvertMatch() {
			return true, fmt.Sprintf("header %s (%s)", name, desc)
		}
		if present {
			return false, fmt.Sprintf("header %s is present; the route wants it absent", name)
		}
		return false, fmt.Sprintf("header %s is absent; the route wants it present", name)
	}
	if !present {
		if !h.GetTreatMissingHeaderAsEmpty() {
			return false, fmt.Sprintf("header %s is absent, and %s never matches an absent header, inverted or not", name, desc)
		}
		v = ""
	}
	ok, err := headerValueMatches(h, v)
	if err != nil {
		return false, fmt.Sprintf("header %s: %v", name, err)
	}
	if ok != h.GetInvertMatch() {
		return true, fmt.Sprintf("header %s %q (%s)", name, v, desc)
	}
	return false, fmt.Sprintf("header %s %q does not satisfy %s", name, v, desc)
}

//nolint:staticcheck // the deprecated matcher forms are valid xDS that a served config may hold
func headerValueMatches(h *envoy_config_route_v3.HeaderMatcher, v string) (bool, error) {
	switch s := h.GetHeaderMatchSpecifier().(type) {
	case *envoy_config_route_v3.HeaderMatcher_StringMatch:
		return stringMatches(s.StringMatch, v)
	case *envoy_config_route_v3.HeaderMatcher_ExactMatch:
		return s.ExactMatch == "" || v == s.ExactMatch, nil
	case *envoy_config_route_v3.HeaderMatcher_PrefixMatch:
		return strings.HasPrefix(v, s.PrefixMatch), nil
	case *envoy_config_route_v3.HeaderMatcher_SuffixMatch:
		return strings.HasSuffix(v, s.SuffixMatch), nil
	case *envoy_config_route_v3.HeaderMatcher_ContainsMatch:
		return strings.Contains(v, s.ContainsMatch), nil
	case *envoy_config_route_v3.HeaderMatcher_SafeRegexMatch:
		return fullMatch(s.SafeRegexMatch.GetRegex(), v)
	case *envoy_config_route_v3.HeaderMatcher_RangeMatch:
		n, err := strconv.ParseInt(v, 10, 64)
		return err == nil && n >= s.RangeMatch.GetStart() && n < s.RangeMatch.GetEnd(), nil
	case nil:
		// No specifier: Envoy matches any value of a present header.
		return true, nil
	}
	return false, fmt.Errorf("explain does not evaluate this matcher; taken not to match")
}

// stringMatches applies a StringMatcher; ignore_case applies to every
// form but the regex.
func stringMatches(m *envoy_type_matcher_v3.StringMatcher, v string) (bool, error) {
	fold := m.GetIgnoreCase()
	lv := v
	if fold {
		lv = strings.ToLower(v)
	}
	l := func(s string) string {
		if fold {
			return strings.ToLower(s)
		}
		return s
	}
	switch p := m.GetMatchPattern().(type) {
	case *envoy_type_matcher_v3.StringMatcher_Exact:
		return lv == l(p.Exact), nil
	case *envoy_type_matcher_v3.StringMatcher_Prefix:
		return strings.HasPrefix(lv, l(p.Prefix)), nil
	case *envoy_type_matcher_v3.StringMatcher_Suffix:
		return strings.HasSuffix(lv, l(p.Suffix)), nil
	case *envoy_type_matcher_v3.StringMatcher_Contains:
		return strings.Contains(lv, l(p.Contains)), nil
	case *envoy_type_matcher_v3.StringMatcher_SafeRegex:
		return fullMatch(p.SafeRegex.GetRegex(), v)
	}
	return false, fmt.Errorf("explain does not evaluate this string matcher; taken not to match")
}

// matchQuery applies a query parameter matcher: Envoy reads the first
// value of the parameter, percent-decoded; an absent parameter matches
// only "present_match: false".
func matchQuery(q *envoy_config_route_v3.QueryParameterMatcher, r *request) (bool, string) {
	name := q.GetName()
	v, present := firstQueryValue(r.query, name)
	if pm, ok := q.GetQueryParameterMatchSpecifier().(*envoy_config_route_v3.QueryParameterMatcher_PresentMatch); ok {
		if present == pm.PresentMatch {
			return true, fmt.Sprintf("query parameter %s is %s", name, map[bool]string{true: "present", false: "absent"}[present])
		}
		return false, fmt.Sprintf("query parameter %s is %s", name, map[bool]string{true: "present; the route wants it absent", false: "absent; the route wants it present"}[present])
	}
	if !present {
		return false, fmt.Sprintf("query parameter %s is absent", name)
	}
	sm := q.GetStringMatch()
	if sm == nil {
		return true, fmt.Sprintf("query parameter %s is present", name)
	}
	ok, err := stringMatches(sm, v)
	if err != nil {
		return false, fmt.Sprintf("query parameter %s: %v", name, err)
	}
	if ok {
		return true, fmt.Sprintf("query parameter %s=%q (%s)", name, v, describeString(sm))
	}
	return false, fmt.Sprintf("query parameter %s=%q does not satisfy %s", name, v, describeString(sm))
}

func firstQueryValue(raw, name string) (string, bool) {
	for _, kv := range strings.Split(raw, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if dk, err := url.PathUnescape(k); err == nil {
			k = dk
		}
		if k != name {
			continue
		}
		if dv, err := url.PathUnescape(v); err == nil {
			v = dv
		}
		return v, true
	}
	return "", false
}
