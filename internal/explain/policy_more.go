package explain

import (
	"fmt"
	"strings"

	envoy_filter_http_cors_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	envoy_filter_http_jwt_authn_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	envoy_filter_http_local_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	envoy_filter_http_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
)

func init() {
	policyExplainers[typeURL(&envoy_filter_http_jwt_authn_v3.JwtAuthentication{})] = jwtPolicy
	policyExplainers[typeURL(&envoy_filter_http_cors_v3.Cors{})] = corsPolicy
	policyExplainers[typeURL(&envoy_filter_http_local_ratelimit_v3.LocalRateLimit{})] = localRateLimitPolicy
	policyExplainers[typeURL(&envoy_filter_http_ratelimit_v3.RateLimit{})] = rateLimitPolicy
}

// jwtPolicy explains jwt_authn: which requirement applies (the route's
// requirement_name, else the first rule whose match matches), and a 401
// when it needs a token and the request carries none where any provider
// looks. Whether a token verifies is up to its signature and claims.
func jwtPolicy(w *walk, fc filterContext) Policy {
	p := Policy{Kind: "jwt_authn", Effect: "applies"}
	cfg, _ := fc.config.(*envoy_filter_http_jwt_authn_v3.JwtAuthentication)
	var req *envoy_filter_http_jwt_authn_v3.JwtRequirement
	switch per, _ := fc.perRoute.(*envoy_filter_http_jwt_authn_v3.PerRouteConfig); {
	case per.GetDisabled():
		p.Effect, p.Detail = "skipped", "JWT authentication is disabled for this route"
		return p
	case per.GetRequirementName() != "":
		req = cfg.GetRequirementMap()[per.GetRequirementName()]
		p.Detail = fmt.Sprintf("the route requires %q", per.GetRequirementName())
	default:
		for i, r := range cfg.GetRules() {
			if ok, _ := matchRoute(r.GetMatch(), w.req); ok {
				req = r.GetRequires()
				p.Detail = fmt.Sprintf("rule %d (%s) applies", i, describeMatch(r.GetMatch()))
				break
			}
		}
	}
	if req == nil {
		p.Effect, p.Detail = "skipped", "no requirement applies to this request"
		return p
	}
	if jwtOptional(req) {
		p.Detail += "; a missing token is allowed"
		return p
	}
	if where := w.jwtToken(cfg); where != "" {
		p.Detail += "; a token is present in " + where
		w.conditional = append(w.conditional, "the JWT in "+where+" verifies")
		return p
	}
	p.Detail += "; no token is present"
	w.decide(Decision{Kind: KindForbidden, Status: 401, Owner: w.owner(fc.route.GetMetadata()),
		Reason: fmt.Sprintf("jwt_authn filter %s requires a JWT and the request carries none (\"Jwt is missing\")", fc.filter.GetName())})
	return p
}

// jwtOptional reports whether a requirement lets a request without a token
// through.
func jwtOptional(r *envoy_filter_http_jwt_authn_v3.JwtRequirement) bool {
	switch t := r.GetRequiresType().(type) {
	case *envoy_filter_http_jwt_authn_v3.JwtRequirement_AllowMissing, *envoy_filter_http_jwt_authn_v3.JwtRequirement_AllowMissingOrFailed:
		return true
	case *envoy_filter_http_jwt_authn_v3.JwtRequirement_RequiresAny:
		for _, sub := range t.RequiresAny.GetRequirements() {
			if jwtOptional(sub) {
				return true
			}
		}
	case nil:
		return true
	}
	return false
}

// jwtToken returns where the request carries a token for some provider:
// its from_headers and from_params, or by default "Authorization: Bearer"
// and the access_token parameter.
func (w *walk) jwtToken(cfg *envoy_filter_http_jwt_authn_v3.JwtAuthentication) string {
	for _, prov := range cfg.GetProviders() {
		headers, params := prov.GetFromHeaders(), prov.GetFromParams()
		if len(headers) == 0 && len(params) == 0 && len(prov.GetFromCookies()) == 0 {
			headers = []*envoy_filter_http_jwt_authn_v3.JwtHeader{{Name: "authorization", ValuePrefix: "Bearer "}}
			params = []string{"access_token"}
		}
		for _, h := range headers {
			if v, ok := w.req.header(strings.ToLower(h.GetName())); ok && strings.HasPrefix(v, h.GetValuePrefix()) {
				return "header " + h.GetName()
			}
		}
		for _, q := range params {
			if _, ok := firstQueryValue(w.req.query, q); ok {
				return "query parameter " + q
			}
		}
	}
	return ""
}

// corsPolicy explains the CORS filter: it acts on requests with an Origin
// under the route's (or virtual host's) CorsPolicy, and answers allowed
// preflights itself.
func corsPolicy(w *walk, fc filterContext) Policy {
	p := Policy{Kind: "cors", Effect: "applies"}
	pol, _ := fc.perRoute.(*envoy_filter_http_cors_v3.CorsPolicy)
	if pol == nil {
		p.Effect, p.Detail = "skipped", "no CORS policy for this route"
		return p
	}
	origin, ok := w.req.header("origin")
	if !ok {
		p.Effect, p.Detail = "skipped", "not a cross-origin request (no Origin header)"
		return p
	}
	allowed := false
	for _, m := range pol.GetAllowOriginStringMatch() {
		if ok, _ := stringMatches(m, origin); ok {
			allowed = true
		}
	}
	_, preflight := w.req.header("access-control-request-method")
	preflight = preflight && w.req.Method == "OPTIONS"
	switch {
	case !allowed:
		p.Detail = fmt.Sprintf("origin %q is not allowed: no CORS headers are added, so a browser refuses the response", origin)
	case preflight:
		p.Detail = fmt.Sprintf("origin %q is allowed; the filter answers the preflight itself", origin)
		w.decide(Decision{Kind: KindDirect, Status: 200, Owner: w.owner(fc.route.GetMetadata()),
			Reason: "a CORS preflight from an allowed origin: the CORS filter answers it (methods " + pol.GetAllowMethods() + ")"})
	default:
		p.Detail = fmt.Sprintf("origin %q is allowed: the response gets Access-Control-Allow-Origin", origin)
	}
	return p
}

// localRateLimitPolicy explains the local rate limit: a token bucket per
// Envoy, 429 (or its status) once empty.
func localRateLimitPolicy(w *walk, fc filterContext) Policy {
	p := Policy{Kind: "local_ratelimit", Effect: "applies"}
	cfg, _ := fc.perRoute.(*envoy_filter_http_local_ratelimit_v3.LocalRateLimit)
	if cfg == nil {
		cfg, _ = fc.config.(*envoy_filter_http_local_ratelimit_v3.LocalRateLimit)
	}
	tb := cfg.GetTokenBucket()
	if tb == nil {
		p.Effect, p.Detail = "skipped", "no token bucket for this route"
		return p
	}
	status := 429
	if s := cfg.GetStatus().GetCode(); s != 0 {
		status = int(s)
	}
	fill := uint32(1)
	if v := tb.GetTokensPerFill(); v != nil {
		fill = v.GetValue()
	}
	p.Detail = fmt.Sprintf("at most %d requests at once and %d per %s per Envoy, then %d", tb.GetMaxTokens(), fill, tb.GetFillInterval().AsDuration(), status)
	w.conditional = append(w.conditional, "the local rate limit is not exhausted")
	return p
}

// rateLimitPolicy explains the global rate limit: the rate limit service
// decides.
func rateLimitPolicy(w *walk, fc filterContext) Policy {
	cfg, _ := fc.config.(*envoy_filter_http_ratelimit_v3.RateLimit)
	own := len(fc.route.GetRoute().GetRateLimits()) > 0
	// Envoy's default, OVERRIDE, uses the host's descriptors for a route
	// without its own; IGNORE (global.disabled) never does.
	if per, _ := fc.perRoute.(*envoy_filter_http_ratelimit_v3.RateLimitPerRoute); !own && per.GetVhRateLimits() == envoy_filter_http_ratelimit_v3.RateLimitPerRoute_IGNORE {
		return Policy{Kind: "ratelimit", Effect: "skipped", Detail: "the route ignores the virtual host's rate_limits and has none of its own"}
	}
	if !own && len(fc.vhost.GetRateLimits()) == 0 {
		return Policy{Kind: "ratelimit", Effect: "skipped", Detail: "neither the route nor the virtual host has rate_limits descriptors"}
	}
	p := Policy{Kind: "ratelimit", Effect: "applies",
		Detail: fmt.Sprintf("the rate limit service (domain %q) decides; over the limit the answer is 429", cfg.GetDomain())}
	w.conditional = append(w.conditional, "the rate limit service allows the request")
	return p
}
