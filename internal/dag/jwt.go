package dag

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"time"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// defaultJWKSTimeout bounds a JWKS fetch, as in Contour.
const defaultJWKSTimeout = time.Second

// JWTAuthn is the JWT verification of a secure virtual host, for Envoy's
// jwt_authn filter.
type JWTAuthn struct {
	// Providers are sorted by name.
	Providers []JWTProvider
}

// JWTProvider is one issuer and its key set.
type JWTProvider struct {
	Name      string
	Issuer    string
	Audiences []string
	Forward   bool
	JWKS      RemoteJWKS
}

// RemoteJWKS is where a provider's keys come from. The host is reached
// through a cluster of its own, resolved by DNS: it is outside the cluster
// as a rule, with no Service or EndpointSlice to read.
type RemoteJWKS struct {
	URI  string
	Host string
	Port uint32
	// TLS is true for https; CA and SubjectName then verify the server.
	TLS         bool
	CA          *Secret
	SubjectName string
	Timeout     time.Duration
	// CacheDuration is nil for Envoy's default.
	CacheDuration *time.Duration
	// DNSLookupFamily is "", "v4", "v6" or "all" ("" is auto).
	DNSLookupFamily string
}

// hostJWT reads the virtual host's JWT providers into rb.hostPolicy. A
// wrong provider is an error and the host is not served: serving it would
// let unverified requests through.
func (rb *rootBuilder) hostJWT(root *switchyardv1.HTTPProxy, st *Status) bool {
	vh := root.Spec.VirtualHost
	if len(vh.JWTProviders) == 0 {
		return true
	}
	const field = "spec.virtualhost.jwtProviders"
	fail := func(reason, format string, args ...any) bool {
		st.addError(ErrVirtualHost, reason, format+"; the virtual host is not served until it is fixed", args...)
		return false
	}
	switch {
	case vh.TLS == nil:
		return fail("JWTWithoutTLS", "%s: requires spec.virtualhost.tls: over plain HTTP the token could be read and replayed", field)
	case vh.TLS.Passthrough || root.Spec.TCPProxy != nil:
		return fail("JWTWithTCPProxy", "%s: verifies HTTP requests and cannot be used with tcpproxy or TLS passthrough", field)
	}
	authn := &JWTAuthn{}
	names := map[string]int{}
	def := ""
	for i, p := range vh.JWTProviders {
		f := field + "[" + strconv.Itoa(i) + "]"
		if err := validateRouteName(p.Name); err != nil {
			return fail("InvalidJWTProvider", "%s.name: %v", f, err)
		}
		if prev, dup := names[p.Name]; dup {
			return fail("DuplicateJWTProvider", "%s.name: %q is already the name of jwtProviders[%d]", f, p.Name, prev)
		}
		names[p.Name] = i
		if p.Default {
			if def != "" {
				return fail("InvalidJWTProvider", "%s.default: %q is already the default provider; at most one may be", f, def)
			}
			def = p.Name
		}
		jp, err := rb.jwtProvider(p, root.Namespace)
		if err != nil {
			return fail("InvalidJWTProvider", "%s.%v", f, err)
		}
		authn.Providers = append(authn.Providers, jp)
	}
	slices.SortFunc(authn.Providers, func(a, b JWTProvider) int { return cmp.Compare(a.Name, b.Name) })
	rb.hostPolicy.jwt, rb.hostPolicy.jwtDefault = authn, def
	return true
}

// jwtProvider validates one provider; errors start with the sub-field.
func (rb *rootBuilder) jwtProvider(p switchyardv1.JWTProvider, ns string) (JWTProvider, error) {
	out := JWTProvider{Name: p.Name, Issuer: p.Issuer, Forward: p.ForwardJWT}
	if err := validateText(p.Issuer); err != nil {
		return out, fmt.Errorf("issuer: %v", err)
	}
	for i, a := range p.Audiences {
		if a == "" {
			return out, fmt.Errorf("audiences[%d]: must not be empty", i)
		}
		if err := validateText(a); err != nil {
			return out, fmt.Errorf("audiences[%d]: %v", i, err)
		}
		out.Audiences = append(out.Audiences, a)
	}
	jwks, err := rb.remoteJWKS(p.RemoteJWKS, ns)
	if err != nil {
		return out, fmt.Errorf("remoteJWKS.%v", err)
	}
	out.JWKS = jwks
	return out, nil
}

func (rb *rootBuilder) remoteJWKS(r switchyardv1.RemoteJWKS, ns string) (RemoteJWKS, error) {
	out := RemoteJWKS{URI: r.URI, Timeout: defaultJWKSTimeout}
	u, err := url.Parse(r.URI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || u.Fragment != "" {
		return out, fmt.Errorf("uri: %q is not an http or https URL with a host", r.URI)
	}
	if err := validateText(r.URI); err != nil {
		return out, fmt.Errorf("uri: %v", err)
	}
	out.Host, out.TLS = u.Hostname(), u.Scheme == "https"
	if net.ParseIP(out.Host) == nil {
		if err := validateFQDN(out.Host); err != nil {
			return out, fmt.Errorf("uri: host: %v", err)
		}
	}
	out.Port = 80
	if out.TLS {
		out.Port = 443
	}
	if ps := u.Port(); ps != "" {
		port, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || port == 0 {
			return out, fmt.Errorf("uri: port %q is not in 1-65535", ps)
		}
		out.Port = uint32(port)
	}
	if r.Timeout != "" {
		d, err := parseDuration(r.Timeout)
		if err != nil || *d == 0 {
			return out, fmt.Errorf("timeout: %q is not a finite duration such as 1s", r.Timeout)
		}
		out.Timeout = *d
	}
	if r.CacheDuration != "" {
		d, err := parseDuration(r.CacheDuration)
		if err != nil || *d == 0 {
			return out, fmt.Errorf("cacheDuration: %q is not a finite duration such as 10m", r.CacheDuration)
		}
		out.CacheDuration = d
	}
	switch r.DNSLookupFamily {
	case "", "auto":
	case "v4", "v6", "all":
		out.DNSLookupFamily = r.DNSLookupFamily
	default:
		return out, fmt.Errorf("dnsLookupFamily: %q is not auto, v4, v6 or all", r.DNSLookupFamily)
	}
	if v := r.UpstreamValidation; v != nil {
		if !out.TLS {
			return out, fmt.Errorf("validation: requires an https uri")
		}
		if err := validateSubjectName(v.SubjectName); err != nil {
			return out, fmt.Errorf("validation.subjectName: %v", err)
		}
		ca, err := rb.secrets.caSecret(v.CACertificate, ns)
		if err != nil {
			return out, fmt.Errorf("validation.caSecret: %v", err)
		}
		rb.addSecret(ca)
		out.CA, out.SubjectName = ca, v.SubjectName
	}
	return out, nil
}

// routeJWT resolves a route's verification: the provider it requires, or
// none. A route naming a provider the host does not have answers
// invalidRouteStatus, never unverified.
func (b *routeBuilder) routeJWT(r *switchyardv1.Route, out *Route) bool {
	hp := &b.rb.hostPolicy
	p := r.JWTVerificationPolicy
	if hp.jwt == nil {
		if p != nil && p.Require != "" {
			b.st.addError(ErrRoute, "JWTProviderNotFound", "%s.jwtVerificationPolicy.require: %q names a provider, but the virtual host has no jwtProviders", b.field, p.Require)
			return false
		}
		return true
	}
	out.JWTVerified = true
	switch {
	case p != nil && p.Require != "" && p.Disabled:
		b.st.addError(ErrRoute, "InvalidJWTVerificationPolicy", "%s.jwtVerificationPolicy: require and disabled are mutually exclusive", b.field)
		return false
	case p != nil && p.Disabled:
	case p != nil && p.Require != "":
		if !slices.ContainsFunc(hp.jwt.Providers, func(jp JWTProvider) bool { return jp.Name == p.Require }) {
			b.st.addError(ErrRoute, "JWTProviderNotFound", "%s.jwtVerificationPolicy.require: the virtual host has no jwtProviders entry named %q", b.field, p.Require)
			return false
		}
		out.JWTProvider = p.Require
	default:
		out.JWTProvider = hp.jwtDefault
	}
	return true
}
