package dag

import (
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// fallbackCertificate resolves spec.virtualhost.tls.enableFallbackCertificate
// onto svh; false means the host cannot be served.
//
// The clients that send no SNI, or a server name no host claims, all
// reach one filter chain and one HTTP connection manager, shared by every
// host that enables the fallback (Contour's design). So a host whose
// safety depends on its own filter chain or HTTP filters cannot enable
// it: a client certificate it requires, an ext_authz check or JWT
// verification would all be skipped by a client that leaves out SNI. As
// in Contour the host is then invalid and not served at all, rather than
// served without the fallback its owner asked for.
func (rb *rootBuilder) fallbackCertificate(root *switchyardv1.HTTPProxy, svh *SecureVirtualHost, st *Status) bool {
	vh := root.Spec.VirtualHost
	if !vh.TLS.EnableFallbackCertificate {
		return true
	}
	const field = "spec.virtualhost.tls.enableFallbackCertificate"
	fail := func(reason, format string, args ...any) bool {
		st.addError(ErrTLS, reason, field+": "+format, args...)
		return false
	}
	switch {
	case vh.TLS.ClientValidation != nil:
		return fail("FallbackWithClientValidation", "cannot be used with spec.virtualhost.tls.clientValidation: a client without SNI would reach the host without a client certificate")
	case rb.authEnabled:
		return fail("FallbackWithAuthorization", "cannot be used with authorization (spec.virtualhost.authorization, or --global-authorization unless authPolicy.disabled is set): requests from clients without SNI would not be checked")
	case len(vh.JWTProviders) > 0:
		return fail("FallbackWithJWT", "cannot be used with spec.virtualhost.jwtProviders: requests from clients without SNI would not be verified")
	case root.Spec.TCPProxy != nil:
		return fail("FallbackWithTCPProxy", "cannot be used with spec.tcpproxy: the fallback filter chain serves HTTP")
	case rb.opts.FallbackCertificate == nil:
		return fail("FallbackNotConfigured", "no fallback certificate is configured: start switchyard with --fallback-certificate NAMESPACE/NAME")
	}
	s, err := rb.secrets.tlsSecret(rb.opts.FallbackCertificate.String(), root.Namespace)
	if err != nil {
		return fail("Fallback"+reasonOf(err), "the fallback certificate of --fallback-certificate: %v", err)
	}
	svh.FallbackCertificate = s
	rb.addSecret(s)
	return true
}
