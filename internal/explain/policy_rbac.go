package explain

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

func init() {
	policyExplainers[typeURL(&envoy_filter_http_rbac_v3.RBAC{})] = rbacPolicy
}

// tri is a match result that may be unknown: a rule on something the
// request given to explain does not carry (no --source-ip, say).
type tri int

const (
	no tri = iota
	yes
	unknown
)

func (t tri) not() tri {
	switch t {
	case yes:
		return no
	case no:
		return yes
	}
	return unknown
}

// rbacPolicy explains the RBAC filter (IP allow and deny lists among
// others): the route's RBACPerRoute replaces the filter's rules, an empty
// one turns it off. ALLOW rules deny what no policy matches, DENY rules
// deny what one does; either way a denial is a 403.
func rbacPolicy(w *walk, fc filterContext) Policy {
	p := Policy{Kind: "rbac", Effect: "applies"}
	cfg, _ := fc.config.(*envoy_filter_http_rbac_v3.RBAC)
	rules := cfg.GetRules()
	if per, ok := fc.perRoute.(*envoy_filter_http_rbac_v3.RBACPerRoute); ok {
		if per.GetRbac() == nil {
			p.Effect, p.Detail = "skipped", "RBAC is turned off for this route"
			return p
		}
		rules = per.GetRbac().GetRules()
	}
	if rules == nil {
		p.Effect, p.Detail = "skipped", "no rules: every request is allowed"
		if cfg.GetMatcher() != nil {
			p.Effect, p.Detail = "unknown", "the rules are a matcher tree, which explain does not evaluate"
		}
		return p
	}
	// why is whether some policy matches; matched names the first that does.
	why, matched := no, ""
	for _, name := range slices.Sorted(maps.Keys(rules.GetPolicies())) {
		m := w.rbacPolicyMatches(rules.GetPolicies()[name])
		if m == yes {
			why, matched = yes, name
			break
		}
		if m == unknown {
			why = unknown
		}
	}
	action := rules.GetAction()
	switch {
	case action == envoy_config_rbac_v3.RBAC_LOG:
		p.Detail = "LOG rules only mark requests for the access log; every request is allowed"
	case why == unknown:
		p.Effect = "unknown"
		p.Detail = fmt.Sprintf("%s rules depend on something explain was not given (give --source-ip for address rules)", action)
		w.conditional = append(w.conditional, "the RBAC filter "+fc.filter.GetName()+" allows the request")
	case (action == envoy_config_rbac_v3.RBAC_ALLOW) == (why == yes):
		p.Detail = fmt.Sprintf("%s rules allow the request", action)
		if matched != "" {
			p.Detail += fmt.Sprintf(" (policy %q matches)", matched)
		}
	default:
		p.Detail = fmt.Sprintf("%s rules deny the request", action)
		reason := "no policy of the ALLOW rules matches it"
		if matched != "" {
			p.Detail += fmt.Sprintf(" (policy %q matches)", matched)
			reason = fmt.Sprintf("policy %q of the DENY rules matches it", matched)
		}
		w.decide(Decision{Kind: KindForbidden, Status: 403,
			Reason: fmt.Sprintf("RBAC filter %s denies the request (\"RBAC: access denied\"): %s", fc.filter.GetName(), reason),
			Owner:  w.owner(fc.route.GetMetadata())})
	}
	return p
}

// rbacPolicyMatches: a policy matches when any permission and any
// principal do.
func (w *walk) rbacPolicyMatches(p *envoy_config_rbac_v3.Policy) tri {
	return and(anyOf(p.GetPermissions(), w.permission), anyOf(p.GetPrincipals(), w.principal))
}

func anyOf[T any](xs []T, f func(T) tri) tri {
	out := no
	for _, x := range xs {
		switch f(x) {
		case yes:
			return yes
		case unknown:
			out = unknown
		}
	}
	return out
}

func allOf[T any](xs []T, f func(T) tri) tri {
	out := yes
	for _, x := range xs {
		switch f(x) {
		case no:
			return no
		case unknown:
			out = unknown
		}
	}
	return out
}

func and(a, b tri) tri {
	switch {
	case a == no || b == no:
		return no
	case a == yes && b == yes:
		return yes
	}
	return unknown
}

func (w *walk) permission(p *envoy_config_rbac_v3.Permission) tri {
	switch r := p.GetRule().(type) {
	case *envoy_config_rbac_v3.Permission_Any:
		return yes
	case *envoy_config_rbac_v3.Permission_AndRules:
		return allOf(r.AndRules.GetRules(), w.permission)
	case *envoy_config_rbac_v3.Permission_OrRules:
		return anyOf(r.OrRules.GetRules(), w.permission)
	case *envoy_config_rbac_v3.Permission_NotRule:
		return w.permission(r.NotRule).not()
	case *envoy_config_rbac_v3.Permission_Header:
		return w.headerRule(r.Header)
	case *envoy_config_rbac_v3.Permission_UrlPath:
		return w.pathRule(r.UrlPath)
	case *envoy_config_rbac_v3.Permission_DestinationPort:
		if w.out.Listener == nil || w.out.Listener.Port == 0 {
			return unknown
		}
		return boolTri(w.out.Listener.Port == r.DestinationPort)
	}
	return unknown
}

func (w *walk) principal(p *envoy_config_rbac_v3.Principal) tri {
	switch r := p.GetIdentifier().(type) {
	case *envoy_config_rbac_v3.Principal_Any:
		return yes
	case *envoy_config_rbac_v3.Principal_AndIds:
		return allOf(r.AndIds.GetIds(), w.principal)
	case *envoy_config_rbac_v3.Principal_OrIds:
		return anyOf(r.OrIds.GetIds(), w.principal)
	case *envoy_config_rbac_v3.Principal_NotId:
		return w.principal(r.NotId).not()
	case *envoy_config_rbac_v3.Principal_RemoteIp:
		return w.ipRule(r.RemoteIp)
	case *envoy_config_rbac_v3.Principal_DirectRemoteIp:
		return w.ipRule(r.DirectRemoteIp)
	case *envoy_config_rbac_v3.Principal_SourceIp: //nolint:staticcheck // still served by older configurations
		return w.ipRule(r.SourceIp) //nolint:staticcheck // as above
	case *envoy_config_rbac_v3.Principal_Header:
		return w.headerRule(r.Header)
	case *envoy_config_rbac_v3.Principal_UrlPath:
		return w.pathRule(r.UrlPath)
	}
	return unknown
}

// ipRule matches the client's address. explain takes --source-ip as both
// the peer and the remote address: with use_remote_address and no trusted
// hops, which is how Switchyard configures Envoy, they are the same.
func (w *walk) ipRule(c *envoy_config_core_v3.CidrRange) tri {
	ip := net.ParseIP(w.req.SourceIP)
	if ip == nil {
		return unknown
	}
	_, n, err := net.ParseCIDR(fmt.Sprintf("%s/%d", c.GetAddressPrefix(), c.GetPrefixLen().GetValue()))
	if err != nil {
		return unknown
	}
	return boolTri(n.Contains(ip))
}

func (w *walk) headerRule(h *envoy_config_route_v3.HeaderMatcher) tri {
	ok, _ := matchHeader(h, w.req)
	return boolTri(ok)
}

func (w *walk) pathRule(m *envoy_type_matcher_v3.PathMatcher) tri {
	sm := m.GetPath()
	if sm == nil {
		return unknown
	}
	bare, _, _ := strings.Cut(w.req.Path, "?")
	ok, err := stringMatches(sm, bare)
	if err != nil {
		return unknown
	}
	return boolTri(ok)
}

func boolTri(b bool) tri {
	if b {
		return yes
	}
	return no
}
