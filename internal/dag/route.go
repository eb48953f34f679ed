package dag

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// invalidRouteStatus is what a route whose spec is wrong answers: it keeps
// its match, so its requests never fall through to a less specific route.
const invalidRouteStatus = 503

// Defaults Contour users expect.
const (
	defaultRetryOn           = "5xx"
	defaultHealthHost        = "switchyard-health"
	defaultHealthInterval    = 5
	defaultHealthTimeout     = 2
	defaultUnhealthyCount    = 3
	defaultHealthyCount      = 2
	sessionAffinityCookie    = "X-Switchyard-Session-Affinity"
	defaultRedirectStatus    = 302
	maxDirectResponseBodyLen = 4096
)

// retryOnValues are the retry conditions the API allows (its CRD enum,
// which a directory source does not apply): Envoy's HTTP and gRPC
// x-envoy-retry-on values that need no further configuration, and
// retriable-status-codes.
var retryOnValues = []string{"5xx", "gateway-error", "reset", "connect-failure", "retriable-4xx", "refused-stream", "retriable-status-codes", "retriable-headers", "cancelled", "deadline-exceeded", "internal", "resource-exhausted", "unavailable"}

// routeBuilder converts one route of one proxy.
type routeBuilder struct {
	rb    *rootBuilder
	proxy types.NamespacedName
	index int
	field string
	st    *Status
}

// build converts the route. It returns nil when the route cannot even be
// matched (its conditions are wrong); a route whose other parts are wrong
// answers invalidRouteStatus instead of forwarding.
func (b *routeBuilder) build(r *switchyardv1.Route, inh matchState) *Route {
	own, err := parseConditions(r.Conditions, b.field+".conditions", false)
	if err != nil {
		b.st.addError(ErrRoute, "InvalidCondition", "%v", err)
		return nil
	}
	out := &Route{Name: r.Name, Proxy: b.proxy, Index: b.index, Websocket: r.EnableWebsockets}
	out.PathMatch, out.HeaderMatches, out.QueryParamMatches, err = inh.routeMatch(own)
	if err != nil {
		b.st.addError(ErrRoute, "InvalidCondition", "%s.conditions: %v", b.field, err)
		return nil
	}
	forwardOK, specOK := b.action(r, out)
	specOK = b.policies(r, out) && specOK
	if !specOK || !forwardOK {
		out = b.invalid(out, !specOK)
	}
	return b.routeAuth(r, out)
}

// invalid turns a route into a fixed error answer, keeping its match.
func (b *routeBuilder) invalid(r *Route, specErr bool) *Route {
	body := fmt.Sprintf("no service available for this route; see the status of HTTPProxy %s", b.proxy)
	if specErr {
		body = fmt.Sprintf("this route is invalid; see the status of HTTPProxy %s", b.proxy)
	}
	out := r.matchOnly()
	out.DirectResponse = &DirectResponse{StatusCode: invalidRouteStatus, Body: body}
	return out
}

// action sets exactly one of Forward, Redirect and DirectResponse.
// forwardOK is false when no service can take the traffic (the Services
// referenced are missing, say); specOK is false when the spec is wrong.
func (b *routeBuilder) action(r *switchyardv1.Route, out *Route) (forwardOK, specOK bool) {
	n := countSet(len(r.Services) > 0, r.RequestRedirectPolicy != nil, r.DirectResponsePolicy != nil)
	if n != 1 {
		b.st.addError(ErrRoute, "InvalidAction", "%s: exactly one of services, requestRedirectPolicy and directResponsePolicy must be set, found %d", b.field, n)
		return false, false
	}
	switch {
	case r.RequestRedirectPolicy != nil:
		return true, b.redirect(r.RequestRedirectPolicy, out)
	case r.DirectResponsePolicy != nil:
		return true, b.directResponse(r.DirectResponsePolicy, out)
	}
	common, ok := b.clusterCommon(r)
	if !ok {
		return false, false
	}
	fb := &forwardBuilder{rb: b.rb, ns: b.proxy.Namespace, field: b.field, st: b.st, common: common, allowHeaders: true, routeHeaders: r.RequestHeadersPolicy}
	fwd, ok := fb.build(r.Services)
	if !ok {
		return false, false
	}
	out.Forward = fwd
	return fwd != nil, true
}

func (b *routeBuilder) clusterCommon(r *switchyardv1.Route) (clusterCommon, bool) {
	var c clusterCommon
	ok := true
	var err error
	c.LoadBalancer, err = loadBalancer(r.LoadBalancerPolicy)
	if err != nil {
		b.st.addError(ErrRoute, "InvalidLoadBalancerPolicy", "%s.loadBalancerPolicy: %v", b.field, err)
		ok = false
	}
	if r.HealthCheckPolicy != nil {
		c.HealthCheck, err = httpHealthCheck(r.HealthCheckPolicy)
		if err != nil {
			b.st.addError(ErrRoute, "InvalidHealthCheckPolicy", "%s.healthCheckPolicy: %v", b.field, err)
			ok = false
		}
	}
	if r.TimeoutPolicy != nil {
		c.IdleTimeout, err = parseDuration(r.TimeoutPolicy.IdleConnection)
		if err != nil {
			b.st.addError(ErrRoute, "InvalidTimeout", "%s.timeoutPolicy.idleConnection: %v", b.field, err)
			ok = false
		}
	}
	return c, ok
}

func (b *routeBuilder) redirect(p *switchyardv1.HTTPRequestRedirectPolicy, out *Route) bool {
	rd := &Redirect{StatusCode: defaultRedirectStatus}
	ok := true
	fail := func(field, format string, args ...any) {
		b.st.addError(ErrRoute, "InvalidRedirect", "%s.requestRedirectPolicy.%s: "+format, append([]any{b.field, field}, args...)...)
		ok = false
	}
	if p.Scheme != nil {
		if *p.Scheme != "http" && *p.Scheme != "https" {
			fail("scheme", "%q is not http or https", *p.Scheme)
		}
		rd.Scheme = *p.Scheme
	}
	if p.Hostname != nil {
		if err := validateFQDN(*p.Hostname); err != nil {
			fail("hostname", "%v", err)
		}
		rd.Hostname = *p.Hostname
	}
	if p.Port != nil {
		if *p.Port < 1 || *p.Port > 65535 {
			fail("port", "%d is not a port number (1-65535)", *p.Port)
		}
		rd.Port = uint32(*p.Port)
	}
	if p.StatusCode != nil {
		switch *p.StatusCode {
		case 301, 302, 303, 307, 308:
			rd.StatusCode = uint32(*p.StatusCode)
		default:
			fail("statusCode", "%d is not one of 301, 302, 303, 307, 308", *p.StatusCode)
		}
	}
	ok = b.redirectPath(p, out, rd, fail) && ok
	out.Redirect = rd
	return ok
}

func (b *routeBuilder) redirectPath(p *switchyardv1.HTTPRequestRedirectPolicy, out *Route, rd *Redirect, fail func(string, string, ...any)) bool {
	if p.Path != nil && p.Prefix != nil {
		fail("path", "path and prefix are mutually exclusive")
		return false
	}
	if p.Path != nil {
		if err := validatePathPart(*p.Path); err != nil {
			fail("path", "%v", err)
			return false
		}
		rd.Path = *p.Path
	}
	if p.Prefix != nil {
		if err := validatePathPart(*p.Prefix); err != nil {
			fail("prefix", "%v", err)
			return false
		}
		if out.PathMatch.Kind != PathPrefix {
			fail("prefix", "a prefix redirect needs a prefix condition on the route")
			return false
		}
		rd.Prefix = *p.Prefix
	}
	return true
}

func (b *routeBuilder) directResponse(p *switchyardv1.HTTPDirectResponsePolicy, out *Route) bool {
	if p.StatusCode < 200 || p.StatusCode > 599 {
		b.st.addError(ErrRoute, "InvalidDirectResponse", "%s.directResponsePolicy.statusCode: %d is not in 200-599", b.field, p.StatusCode)
		return false
	}
	if len(p.Body) > maxDirectResponseBodyLen {
		b.st.addError(ErrRoute, "InvalidDirectResponse", "%s.directResponsePolicy.body: longer than %d bytes", b.field, maxDirectResponseBodyLen)
		return false
	}
	if !utf8.ValidString(p.Body) {
		b.st.addError(ErrRoute, "InvalidDirectResponse", "%s.directResponsePolicy.body: is not valid UTF-8", b.field)
		return false
	}
	out.DirectResponse = &DirectResponse{StatusCode: uint32(p.StatusCode), Body: p.Body}
	return true
}

// policies converts the route-level policies that do not choose the
// backend; each failure is recorded and makes the route invalid.
func (b *routeBuilder) policies(r *switchyardv1.Route, out *Route) bool {
	ok := b.timeouts(r.TimeoutPolicy, out)
	ok = b.retry(r.RetryPolicy, out) && ok
	ok = b.rewrite(r.PathRewritePolicy, out) && ok
	ok = b.hashPolicies(r.LoadBalancerPolicy, out) && ok
	ok = b.routePolicies(r, out) && ok
	ok = b.internalRedirect(r.InternalRedirectPolicy, r, out) && ok
	var cerr error
	if out.CookieRewrites, cerr = parseCookieRewrites(r.CookieRewritePolicies); cerr != nil {
		b.st.addError(ErrRoute, "InvalidCookieRewrite", "%s.cookieRewritePolicies%v", b.field, cerr)
		ok = false
	}
	var err error
	var host hostRewrite
	vars := headerVars{namespace: b.proxy.Namespace}
	if out.RequestHeaders, host, err = parseHeadersPolicy(r.RequestHeadersPolicy, headerScope{request: true, hostFromHeader: true, vars: vars}); err != nil {
		b.st.addError(ErrRoute, "InvalidHeadersPolicy", "%s.requestHeadersPolicy: %v", b.field, err)
		ok = false
	}
	out.HostRewrite, out.HostRewriteHeader = host.literal, host.header
	if out.ResponseHeaders, _, err = parseHeadersPolicy(r.ResponseHeadersPolicy, headerScope{vars: vars}); err != nil {
		b.st.addError(ErrRoute, "InvalidHeadersPolicy", "%s.responseHeadersPolicy: %v", b.field, err)
		ok = false
	}
	return ok
}

func (b *routeBuilder) timeouts(tp *switchyardv1.TimeoutPolicy, out *Route) bool {
	if tp == nil {
		return true
	}
	ok := true
	var err error
	if out.ResponseTimeout, err = parseDuration(tp.Response); err != nil {
		b.st.addError(ErrRoute, "InvalidTimeout", "%s.timeoutPolicy.response: %v", b.field, err)
		ok = false
	}
	if out.IdleTimeout, err = parseDuration(tp.Idle); err != nil {
		b.st.addError(ErrRoute, "InvalidTimeout", "%s.timeoutPolicy.idle: %v", b.field, err)
		ok = false
	}
	return ok
}

func (b *routeBuilder) retry(rp *switchyardv1.RetryPolicy, out *Route) bool {
	if rp == nil {
		return true
	}
	count := uint32(1)
	if rp.Count != nil {
		if *rp.Count < 0 || *rp.Count > 100 {
			b.st.addError(ErrRoute, "InvalidRetryPolicy", "%s.retryPolicy.count: %d is not in 0-100", b.field, *rp.Count)
			return false
		}
		count = uint32(*rp.Count)
	}
	if count == 0 {
		return true
	}
	retry := &Retry{Count: count, RetryOn: []string{defaultRetryOn}}
	perTry, err := parseDuration(rp.PerTryTimeout)
	if err != nil {
		b.st.addError(ErrRoute, "InvalidRetryPolicy", "%s.retryPolicy.perTryTimeout: %v", b.field, err)
		return false
	}
	retry.PerTryTimeout = perTry
	if len(rp.RetryOn) > 0 {
		retry.RetryOn = nil
		for i, on := range rp.RetryOn {
			if !slices.Contains(retryOnValues, string(on)) {
				b.st.addError(ErrRoute, "InvalidRetryPolicy", "%s.retryPolicy.retryOn[%d]: %q is not one of %s", b.field, i, on, strings.Join(retryOnValues, ", "))
				return false
			}
			retry.RetryOn = append(retry.RetryOn, string(on))
		}
	}
	for i, code := range rp.RetriableStatusCodes {
		if code < 100 || code > 599 {
			b.st.addError(ErrRoute, "InvalidRetryPolicy", "%s.retryPolicy.retriableStatusCodes[%d]: %d is not an HTTP status", b.field, i, code)
			return false
		}
		retry.RetriableStatusCodes = append(retry.RetriableStatusCodes, uint32(code))
	}
	if len(retry.RetriableStatusCodes) > 0 && !slices.Contains(retry.RetryOn, "retriable-status-codes") {
		b.st.addWarning(ErrRoute, "RetriableStatusCodesUnused", "%s.retryPolicy.retriableStatusCodes: has no effect unless retryOn includes retriable-status-codes", b.field)
	}
	out.Retry = retry
	return true
}

// rewrite picks the replacePrefix entry for the route's prefix. A rewrite
// is validated like any path so it cannot climb out of its prefix.
func (b *routeBuilder) rewrite(p *switchyardv1.PathRewritePolicy, out *Route) bool {
	if p == nil || len(p.ReplacePrefix) == 0 {
		return true
	}
	if out.PathMatch.Kind != PathPrefix {
		b.st.addError(ErrRoute, "InvalidPathRewrite", "%s.pathRewritePolicy: a prefix rewrite needs a prefix condition on the route", b.field)
		return false
	}
	chosen := ""
	for i, rp := range p.ReplacePrefix {
		if err := validatePathPart(rp.Replacement); err != nil {
			b.st.addError(ErrRoute, "InvalidPathRewrite", "%s.pathRewritePolicy.replacePrefix[%d].replacement: %v", b.field, i, err)
			return false
		}
		if rp.Prefix == "" || strings.TrimSuffix(rp.Prefix, "/") == strings.TrimSuffix(out.PathMatch.Value, "/") {
			if chosen == "" || rp.Prefix != "" {
				chosen = rp.Replacement
			}
		}
	}
	if chosen == "" {
		b.st.addError(ErrRoute, "InvalidPathRewrite", "%s.pathRewritePolicy.replacePrefix: no entry matches the route's prefix %q", b.field, out.PathMatch.Value)
		return false
	}
	out.PrefixRewrite = chosen
	return true
}

func (b *routeBuilder) hashPolicies(lb *switchyardv1.LoadBalancerPolicy, out *Route) bool {
	if lb == nil {
		return true
	}
	switch lb.Strategy {
	case switchyardv1.Cookie:
		out.HashPolicies = []HashPolicy{{Cookie: sessionAffinityCookie, Terminal: true}}
		return true
	case switchyardv1.RequestHash:
	default:
		if len(lb.RequestHashPolicies) > 0 {
			b.st.addError(ErrRoute, "InvalidLoadBalancerPolicy", "%s.loadBalancerPolicy.requestHashPolicies: requires strategy RequestHash", b.field)
			return false
		}
		return true
	}
	if len(lb.RequestHashPolicies) == 0 {
		b.st.addError(ErrRoute, "InvalidLoadBalancerPolicy", "%s.loadBalancerPolicy: strategy RequestHash needs at least one requestHashPolicies entry", b.field)
		return false
	}
	for i, hp := range lb.RequestHashPolicies {
		h, err := hashPolicy(hp)
		if err != nil {
			b.st.addError(ErrRoute, "InvalidLoadBalancerPolicy", "%s.loadBalancerPolicy.requestHashPolicies[%d]: %v", b.field, i, err)
			return false
		}
		out.HashPolicies = append(out.HashPolicies, h)
	}
	return true
}

func hashPolicy(hp switchyardv1.RequestHashPolicy) (HashPolicy, error) {
	h := HashPolicy{Terminal: hp.Terminal}
	if n := countSet(hp.HeaderHashOptions != nil, hp.QueryParameterHashOptions != nil, hp.HashSourceIP); n != 1 {
		return h, fmt.Errorf("exactly one of headerHashOptions, queryParameterHashOptions and hashSourceIP must be set, found %d", n)
	}
	switch {
	case hp.HeaderHashOptions != nil:
		if err := validateHeaderName(hp.HeaderHashOptions.HeaderName); err != nil {
			return h, fmt.Errorf("headerHashOptions.headerName: %v", err)
		}
		h.Header = strings.ToLower(hp.HeaderHashOptions.HeaderName)
	case hp.QueryParameterHashOptions != nil:
		if hp.QueryParameterHashOptions.ParameterName == "" {
			return h, fmt.Errorf("queryParameterHashOptions.parameterName: must be set")
		}
		if err := validateText(hp.QueryParameterHashOptions.ParameterName); err != nil {
			return h, fmt.Errorf("queryParameterHashOptions.parameterName: %v", err)
		}
		h.QueryParameter = hp.QueryParameterHashOptions.ParameterName
	default:
		h.SourceIP = true
	}
	return h, nil
}

// loadBalancer maps a policy to a strategy name.
func loadBalancer(lb *switchyardv1.LoadBalancerPolicy) (string, error) {
	if lb == nil || lb.Strategy == "" {
		return LBRoundRobin, nil
	}
	switch lb.Strategy {
	case switchyardv1.RoundRobin, switchyardv1.Random, switchyardv1.WeightedLeastRequest, switchyardv1.Cookie, switchyardv1.RequestHash:
		return string(lb.Strategy), nil
	}
	return "", fmt.Errorf("strategy %q is not one of RoundRobin, Random, WeightedLeastRequest, Cookie, RequestHash", lb.Strategy)
}

func httpHealthCheck(p *switchyardv1.HTTPHealthCheckPolicy) (*HealthCheck, error) {
	if err := validatePathPart(p.Path); err != nil {
		return nil, fmt.Errorf("path: %v", err)
	}
	hc, err := healthCheckCommon(p.IntervalSeconds, p.TimeoutSeconds, p.UnhealthyThresholdCount, p.HealthyThresholdCount)
	if err != nil {
		return nil, err
	}
	hc.Path = p.Path
	if hc.ExpectedStatuses, err = expectedStatuses(p.ExpectedStatuses); err != nil {
		return nil, err
	}
	hc.Host = defaultHealthHost
	if p.Host != "" {
		if err := validateFQDN(p.Host); err != nil {
			return nil, fmt.Errorf("host: %v", err)
		}
		hc.Host = p.Host
	}
	return hc, nil
}
