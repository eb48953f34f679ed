package dag

import (
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// HostPolicies are a virtual host's traffic policies. Each is nil when
// not configured.
type HostPolicies struct {
	// IPFilter applies to every route that has none of its own.
	IPFilter *IPFilter
	// CORS answers preflights and adds CORS headers (Envoy only).
	CORS *CORSPolicy
	// RateLimit applies to every route that has none of its own (Envoy
	// only).
	RateLimit *LocalRateLimit
	// JWT verifies tokens; secure hosts only.
	JWT *JWTAuthn
	// GlobalRateLimits are sent to the rate limit service for every route
	// that has none of its own (Envoy only).
	GlobalRateLimits []RateLimitDescriptor
	// RateLimitService is set when the host or one of its routes sends
	// descriptors: its HCM then needs the rate limit filter.
	RateLimitService *RateLimitService
}

// RoutePolicies are a route's own traffic policies; each is nil when the
// route inherits its virtual host's.
type RoutePolicies struct {
	IPFilter  *IPFilter
	RateLimit *LocalRateLimit
	// GlobalRateLimits replace the host's; GlobalRateLimitDisabled, set
	// when the host has limits, sends none, not even the host's.
	GlobalRateLimits        []RateLimitDescriptor
	GlobalRateLimitDisabled bool
	// JWTVerified is set on every route of a host with JWT providers;
	// JWTProvider names the provider that verifies the route, "" when the
	// route does not verify.
	JWTVerified bool
	JWTProvider string
}

// hostPolicy is what a root's traffic policies resolved to, read by the
// routes built after it and set on the virtual hosts at the end.
type hostPolicy struct {
	ipFilter   *IPFilter
	cors       *CORSPolicy
	rateLimit  *LocalRateLimit
	jwt        *JWTAuthn
	jwtDefault string

	globalRateLimits []RateLimitDescriptor
	// The rate limit service, resolved when first needed (see
	// rateLimitService), and whether the host uses it.
	rlResolved bool
	rlService  *RateLimitService
	rlWhy      string
	rlUsed     bool
}

// hostPolicies validates the root's traffic policies, recording errors.
// It returns false when the host must not be served (see hostIPFilter).
func (rb *rootBuilder) hostPolicies(root *switchyardv1.HTTPProxy, st *Status) bool {
	rb.hostCORS(root, st)
	ok := rb.hostIPFilter(root, st)
	ok = rb.hostJWT(root, st) && ok
	ok = rb.hostGlobalRateLimit(root, st) && ok
	return rb.hostRateLimit(root, st) && ok
}

// applyHostPolicies sets the host policies on the virtual hosts built.
// The plain-HTTP host gets them too: the routes it forwards
// (permitInsecure) must be filtered like their HTTPS twins.
func (rb *rootBuilder) applyHostPolicies(res *RootResult) {
	p := HostPolicies{IPFilter: rb.hostPolicy.ipFilter, CORS: rb.hostPolicy.cors, RateLimit: rb.hostPolicy.rateLimit, GlobalRateLimits: rb.hostPolicy.globalRateLimits}
	if rb.hostPolicy.rlUsed {
		p.RateLimitService = rb.hostPolicy.rlService
	}
	if vh := res.Insecure; vh != nil {
		vh.HostPolicies = p
		if !forwardsAny(vh.Routes) {
			// Only redirects to https: Envoy asks the rate limit service
			// for forwarded requests only, so the shared plain listener
			// needs no filter for this host.
			vh.GlobalRateLimits, vh.RateLimitService = nil, nil
		}
	}
	if svh := res.Secure; svh != nil && svh.TCPProxy == nil {
		svh.HostPolicies = p
		svh.JWT = rb.hostPolicy.jwt
	}
}

// forwardsAny reports whether some route forwards requests, as opposed
// to redirecting or answering them.
func forwardsAny(routes []*Route) bool {
	for _, r := range routes {
		if r != nil && r.Forward != nil && !r.HTTPSRedirect {
			return true
		}
	}
	return false
}

// routePolicies validates a route's traffic policies; each failure is
// recorded and makes the route invalid.
func (b *routeBuilder) routePolicies(r *switchyardv1.Route, out *Route) bool {
	ok := b.routeIPFilter(r, out)
	ok = b.routeJWT(r, out) && ok
	ok = b.routeGlobalRateLimit(r, out) && ok
	return b.routeRateLimit(r, out) && ok
}

// guarded reports whether a route sits behind a policy that decides who
// may reach it: ext_authz, JWT verification, or an IP filter of its own
// or of its host.
// Clients that bypass Envoy and cannot enforce the policy (DNS clients)
// must not be led to its backends.
func (rb *rootBuilder) guarded(r *Route) bool {
	return (rb.authEnabled && !r.AuthDisabled) || r.IPFilter != nil || rb.hostPolicy.ipFilter != nil || r.JWTProvider != ""
}

// permitInsecureAllowed reports whether the host's policies let routes be
// served over plain HTTP: with JWT they may not, the token would travel in
// clear text and the plain copy would skip verification.
func (rb *rootBuilder) permitInsecureAllowed() bool {
	return rb.hostPolicy.jwt == nil
}
