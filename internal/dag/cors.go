package dag

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// maxCORSMaxAge bounds maxAge: browsers cap it far lower (Chrome at two
// hours), so a longer one is a mistake.
const maxCORSMaxAge = 24 * time.Hour

// CORSPolicy is a virtual host's CORS policy, for Envoy's CORS filter.
type CORSPolicy struct {
	AllowCredentials bool
	// AllowOrigins keep the policy's order.
	AllowOrigins  []OriginMatch
	AllowMethods  []string
	AllowHeaders  []string
	ExposeHeaders []string
	// MaxAge is in whole seconds; "" when unset.
	MaxAge              string
	AllowPrivateNetwork bool
}

// OriginMatch is one allowed origin: an exact string ("*" included, which
// Envoy treats as any origin) or an RE2 expression.
type OriginMatch struct {
	Regex bool
	Value string
}

// parseCORSPolicy validates a corsPolicy; every problem is reported, each
// naming its field.
func parseCORSPolicy(p *switchyardv1.CORSPolicy, field string) (*CORSPolicy, []error) {
	out := &CORSPolicy{AllowCredentials: p.AllowCredentials, AllowPrivateNetwork: p.AllowPrivateNetwork}
	var errs []error
	fail := func(f, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: "+format, append([]any{field, f}, args...)...))
	}
	if len(p.AllowOrigin) == 0 {
		fail("allowOrigin", "must list at least one origin")
	}
	for i, o := range p.AllowOrigin {
		m, err := parseOrigin(o)
		if err != nil {
			fail("allowOrigin["+strconv.Itoa(i)+"]", "%v", err)
			continue
		}
		out.AllowOrigins = append(out.AllowOrigins, m)
	}
	if len(p.AllowMethods) == 0 {
		fail("allowMethods", "must list at least one method")
	}
	for _, l := range []struct {
		name string
		in   []switchyardv1.CORSHeaderValue
		out  *[]string
	}{{"allowMethods", p.AllowMethods, &out.AllowMethods}, {"allowHeaders", p.AllowHeaders, &out.AllowHeaders}, {"exposeHeaders", p.ExposeHeaders, &out.ExposeHeaders}} {
		for i, v := range l.in {
			if err := validateCORSToken(string(v)); err != nil {
				fail(l.name+"["+strconv.Itoa(i)+"]", "%v", err)
				continue
			}
			*l.out = append(*l.out, string(v))
		}
	}
	if p.MaxAge != "" {
		d, err := time.ParseDuration(p.MaxAge)
		switch {
		case err != nil:
			fail("maxAge", "%q is not a duration such as 10m", p.MaxAge)
		case d < 0:
			fail("maxAge", "%s is negative", p.MaxAge)
		case d > maxCORSMaxAge:
			fail("maxAge", "%s is longer than %s", p.MaxAge, maxCORSMaxAge)
		default:
			out.MaxAge = strconv.FormatInt(int64(d/time.Second), 10)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// parseOrigin reads an allowed origin the way Contour does: "*", an exact
// origin (scheme://host[:port], nothing else), or else an RE2 expression
// Envoy will accept.
func parseOrigin(o string) (OriginMatch, error) {
	if o == "*" {
		return OriginMatch{Value: o}, nil
	}
	if u, err := url.Parse(o); err == nil && u.Scheme != "" && u.Host != "" && u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil && !strings.ContainsAny(o, `\^$*+?()[]{}|`) {
		return OriginMatch{Value: o}, nil
	}
	if err := validateRegex(o); err != nil {
		return OriginMatch{}, fmt.Errorf("neither an origin such as https://app.example.com nor a valid regex: %v", err)
	}
	return OriginMatch{Regex: true, Value: o}, nil
}

// validateCORSToken checks a method or header name, or "*".
func validateCORSToken(v string) error {
	if v == "*" {
		return nil
	}
	if v == "" || len(v) > 256 {
		return fmt.Errorf("must be 1 to 256 characters long")
	}
	for _, r := range v {
		if !isTokenChar(r) {
			return fmt.Errorf("%q contains %q, which is not allowed in an HTTP method or header name", v, r)
		}
	}
	return nil
}

// hostCORS reads the virtual host's CORS policy. A wrong policy is an
// error and the host is served without CORS, which is what browsers
// enforce anyway: cross-origin requests stay refused.
func (rb *rootBuilder) hostCORS(root *switchyardv1.HTTPProxy, st *Status) {
	p := root.Spec.VirtualHost.CORSPolicy
	if p == nil {
		return
	}
	if root.Spec.TCPProxy != nil {
		st.addError(ErrVirtualHost, "CORSWithTCPProxy", "spec.virtualhost.corsPolicy: applies to HTTP requests and cannot be used with spec.tcpproxy")
		return
	}
	cors, errs := parseCORSPolicy(p, "spec.virtualhost.corsPolicy")
	for _, err := range errs {
		st.addError(ErrVirtualHost, "InvalidCORSPolicy", "%v; the host is served without CORS until it is fixed", err)
	}
	rb.hostPolicy.cors = cors
}
