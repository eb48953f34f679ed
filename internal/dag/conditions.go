package dag

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// matchState is the accumulated conditions of a route: those of every
// include it came through, then its own.
type matchState struct {
	// prefix is the joined path prefix of the includes, "" for none.
	prefix  string
	path    *PathMatch
	headers []HeaderMatch
	queries []QueryParamMatch
}

// parseConditions reads a list of conditions. Includes may only narrow by
// prefix, header and query parameter (exact and regex paths would leave the
// included proxy nothing to route), and a list holds at most one path
// condition.
func parseConditions(conds []switchyardv1.MatchCondition, field string, include bool) (matchState, error) {
	var ms matchState
	paths := 0
	for i, c := range conds {
		if n := countSet(c.Prefix != "", c.Exact != "", c.Regex != "", c.Header != nil, c.QueryParameter != nil); n != 1 {
			return ms, fmt.Errorf("%s: exactly one of prefix, exact, regex, header and queryParameter must be set, found %d", condField(field, i), n)
		}
		switch {
		case c.Prefix != "":
			paths++
			if err := validatePathPart(c.Prefix); err != nil {
				return ms, fmt.Errorf("%s.prefix: %v", condField(field, i), err)
			}
			ms.path = &PathMatch{Kind: PathPrefix, Value: c.Prefix}
		case c.Exact != "" || c.Regex != "":
			paths++
			if include {
				return ms, fmt.Errorf("%s: an include can only use prefix, header and queryParameter conditions", condField(field, i))
			}
			pm, err := parsePathCondition(c)
			if err != nil {
				return ms, fmt.Errorf("%s: %v", condField(field, i), err)
			}
			ms.path = pm
		case c.Header != nil:
			hm, err := parseHeaderCondition(c.Header)
			if err != nil {
				return ms, fmt.Errorf("%s.header: %v", condField(field, i), err)
			}
			ms.headers = append(ms.headers, hm)
		default:
			qm, err := parseQueryCondition(c.QueryParameter)
			if err != nil {
				return ms, fmt.Errorf("%s.queryParameter: %v", condField(field, i), err)
			}
			ms.queries = append(ms.queries, qm)
		}
	}
	if paths > 1 {
		return ms, fmt.Errorf("%s: at most one of the conditions may be a path (prefix, exact or regex), found %d", field, paths)
	}
	if include && ms.path != nil {
		ms.prefix, ms.path = ms.path.Value, nil
	}
	return ms, nil
}

// condField names one condition of a list, for error messages (built
// only when there is one).
func condField(field string, i int) string {
	return field + "[" + strconv.Itoa(i) + "]"
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func parsePathCondition(c switchyardv1.MatchCondition) (*PathMatch, error) {
	if c.Exact != "" {
		if err := validatePathPart(c.Exact); err != nil {
			return nil, fmt.Errorf("exact: %v", err)
		}
		return &PathMatch{Kind: PathExact, Value: c.Exact}, nil
	}
	if err := validateRegex(c.Regex); err != nil {
		return nil, fmt.Errorf("regex: %v", err)
	}
	return &PathMatch{Kind: PathRegex, Value: c.Regex}, nil
}

func parseHeaderCondition(h *switchyardv1.HeaderMatchCondition) (HeaderMatch, error) {
	hm := HeaderMatch{Name: strings.ToLower(h.Name), IgnoreCase: h.IgnoreCase}
	if err := validateMatchHeaderName(h.Name); err != nil {
		return hm, fmt.Errorf("name: %v", err)
	}
	n := countSet(h.Present, h.NotPresent, h.Contains != "", h.NotContains != "", h.Exact != "", h.NotExact != "", h.Regex != "")
	if n != 1 {
		return hm, fmt.Errorf("exactly one of present, notpresent, contains, notcontains, exact, notexact and regex must be set, found %d", n)
	}
	switch {
	case h.Present, h.NotPresent:
		hm.Kind, hm.Invert = MatchPresent, h.NotPresent
	case h.Contains != "", h.NotContains != "":
		hm.Kind, hm.Value, hm.Invert = MatchContains, h.Contains+h.NotContains, h.NotContains != ""
	case h.Exact != "", h.NotExact != "":
		hm.Kind, hm.Value, hm.Invert = MatchExact, h.Exact+h.NotExact, h.NotExact != ""
	default:
		if err := validateRegex(h.Regex); err != nil {
			return hm, fmt.Errorf("regex: %v", err)
		}
		hm.Kind, hm.Value = MatchRegex, h.Regex
	}
	if hm.Kind != MatchRegex {
		if err := validateHeaderValue(hm.Value); err != nil {
			return hm, err
		}
	}
	return hm, nil
}

func parseQueryCondition(q *switchyardv1.QueryParameterMatchCondition) (QueryParamMatch, error) {
	qm := QueryParamMatch{Name: q.Name, IgnoreCase: q.IgnoreCase}
	if q.Name == "" || len(q.Name) > 256 {
		return qm, errors.New("name: must be 1 to 256 characters")
	}
	if err := validateText(q.Name); err != nil {
		return qm, fmt.Errorf("name: %v", err)
	}
	n := countSet(q.Exact != "", q.Prefix != "", q.Regex != "", q.Present)
	if n != 1 {
		return qm, fmt.Errorf("exactly one of exact, prefix, regex and present must be set, found %d", n)
	}
	switch {
	case q.Exact != "":
		qm.Kind, qm.Value = MatchExact, q.Exact
	case q.Prefix != "":
		qm.Kind, qm.Value = MatchPrefix, q.Prefix
	case q.Regex != "":
		if err := validateRegex(q.Regex); err != nil {
			return qm, fmt.Errorf("regex: %v", err)
		}
		qm.Kind, qm.Value = MatchRegex, q.Regex
	default:
		qm.Kind = MatchPresent
	}
	if err := validateHeaderValue(qm.Value); err != nil {
		return qm, err
	}
	return qm, nil
}

// narrow returns the state of an include nested inside inh.
func (inh matchState) narrow(inc matchState) matchState {
	return matchState{
		prefix:  joinPrefix(inh.prefix, inc.prefix),
		headers: append(append([]HeaderMatch(nil), inh.headers...), inc.headers...),
		queries: append(append([]QueryParamMatch(nil), inh.queries...), inc.queries...),
	}
}

// joinPrefix appends a path prefix to an include's prefix: "/api" + "/v1"
// is "/api/v1", and "/api" + "/" is "/api".
func joinPrefix(outer, inner string) string {
	switch {
	case outer == "":
		return inner
	case inner == "" || inner == "/":
		return outer
	default:
		return strings.TrimSuffix(outer, "/") + inner
	}
}

// routeMatch folds a route's own conditions into the inherited ones.
func (inh matchState) routeMatch(own matchState) (PathMatch, []HeaderMatch, []QueryParamMatch, error) {
	pm := PathMatch{Kind: PathPrefix, Value: joinPrefix(inh.prefix, "/")}
	if pm.Value == "" {
		pm.Value = "/"
	}
	if own.path != nil {
		switch own.path.Kind {
		case PathPrefix:
			pm = PathMatch{Kind: PathPrefix, Value: joinPrefix(inh.prefix, own.path.Value)}
		case PathExact:
			pm = PathMatch{Kind: PathExact, Value: strings.TrimSuffix(inh.prefix, "/") + own.path.Value}
		case PathRegex:
			pm = PathMatch{Kind: PathRegex, Value: regexp.QuoteMeta(strings.TrimSuffix(inh.prefix, "/")) + own.path.Value}
			if err := validateRegex(pm.Value); err != nil {
				return pm, nil, nil, fmt.Errorf("regex with the include prefix: %v", err)
			}
		}
	}
	headers := append(append([]HeaderMatch(nil), inh.headers...), own.headers...)
	queries := append(append([]QueryParamMatch(nil), inh.queries...), own.queries...)
	sort.SliceStable(headers, func(i, j int) bool { return headerKey(headers[i]) < headerKey(headers[j]) })
	sort.SliceStable(queries, func(i, j int) bool { return queryKey(queries[i]) < queryKey(queries[j]) })
	return pm, headers, queries, nil
}

func headerKey(h HeaderMatch) string {
	return fmt.Sprintf("%s\x00%d\x00%s\x00%t\x00%t", h.Name, h.Kind, h.Value, h.Invert, h.IgnoreCase)
}

func queryKey(q QueryParamMatch) string {
	return fmt.Sprintf("%s\x00%d\x00%s\x00%t", q.Name, q.Kind, q.Value, q.IgnoreCase)
}

// matchSignature identifies a route's conditions, to find two routes that
// would match the same requests.
func matchSignature(r *Route) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(r.PathMatch.Kind)))
	b.WriteByte(0)
	b.WriteString(r.PathMatch.Value)
	for _, h := range r.HeaderMatches {
		b.WriteString("\x01" + headerKey(h))
	}
	for _, q := range r.QueryParamMatches {
		b.WriteString("\x02" + queryKey(q))
	}
	return b.String()
}

// sortRoutes orders routes the way Envoy must see them, most specific
// first: exact paths, then regexes, then prefixes; longer paths first; then
// more header and query conditions first. Ties keep their discovery order.
func sortRoutes(rs []*Route) {
	rank := func(k PathMatchKind) int {
		switch k {
		case PathExact:
			return 0
		case PathRegex:
			return 1
		case PathPrefix:
			return 2
		}
		return 0
	}
	// slices, not sort.SliceStable, whose swapper allocates: every root
	// sorts its routes.
	slices.SortStableFunc(rs, func(a, b *Route) int {
		if c := cmp.Compare(rank(a.PathMatch.Kind), rank(b.PathMatch.Kind)); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.PathMatch.Value), len(a.PathMatch.Value)); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.HeaderMatches), len(a.HeaderMatches)); c != 0 {
			return c
		}
		return cmp.Compare(len(b.QueryParamMatches), len(a.QueryParamMatches))
	})
}

// ResourceRejected is the error of an object whose output includes an xDS
// resource that failed validation at the gate before the cache: the
// resource is withheld (clients keep its last good version, if any) and
// the message names it, the objects it was made from besides the one
// reporting it, and the problem, whose text names the field and value.
func ResourceRejected(group, typ, name string, madeFrom []string, problem string) switchyardv1.SubCondition {
	from := ""
	if len(madeFrom) > 0 {
		from = " (made from " + strings.Join(madeFrom, ", ") + ")"
	}
	msg := fmt.Sprintf("%s %s %q%s is withheld from clients: %s", group, typ, name, from, problem)
	return switchyardv1.SubCondition{Type: ErrSpec, Reason: "ResourceRejected", Message: boundMessage(msg)}
}

// matchPseudoHeaders are the pseudo-headers a request condition may name:
// Envoy matches them like headers (Contour's guides route by :method this
// way). They can still never be set or removed.
var matchPseudoHeaders = []string{":authority", ":method", ":path", ":scheme"}

// validateMatchHeaderName checks the header name of a condition: a header
// name, or one of matchPseudoHeaders.
func validateMatchHeaderName(name string) error {
	if !strings.HasPrefix(name, ":") {
		return validateHeaderName(name)
	}
	if !slices.Contains(matchPseudoHeaders, name) {
		return fmt.Errorf("%q: the pseudo-headers a condition can match are %s", name, strings.Join(matchPseudoHeaders, ", "))
	}
	return nil
}
