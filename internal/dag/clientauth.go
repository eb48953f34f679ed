package dag

import (
	"crypto/x509"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// CRLKey is the key of a revocation-list Secret, as in Contour.
const CRLKey = "crl.pem"

// ClientAuth are the client certificate options of a secure virtual host
// beyond its ClientCA.
type ClientAuth struct {
	// SkipVerify asks for a certificate and accepts any.
	SkipVerify bool
	// Optional lets clients without a certificate in.
	Optional bool
	// CRL is PEM revocation lists; CRLLeafOnly checks the leaf only.
	CRL         []byte
	CRLLeafOnly bool
	// Forward, when set, adds x-forwarded-client-cert.
	Forward *ForwardClientCert
}

// ForwardClientCert chooses the x-forwarded-client-cert details beyond
// the hash.
type ForwardClientCert struct {
	Subject, Cert, Chain, DNS, URI bool
}

// clientValidation resolves spec.virtualhost.tls.clientValidation onto
// svh; false means the host cannot be served.
func (rb *rootBuilder) clientValidation(cv *switchyardv1.DownstreamValidation, ns string, svh *SecureVirtualHost, st *Status) bool {
	const field = "spec.virtualhost.tls.clientValidation"
	if cv == nil {
		return true
	}
	switch {
	case cv.CACertificate == "" && !cv.SkipClientCertValidation:
		st.addError(ErrTLS, "InvalidClientValidation", "%s.caSecret: is required unless skipClientCertValidation is true", field)
		return false
	case cv.CertificateRevocationList != "" && cv.CACertificate == "":
		st.addError(ErrTLS, "InvalidClientValidation", "%s.crlSecret: requires caSecret: revocation is checked along the verified chain", field)
		return false
	}
	if cv.CACertificate != "" {
		ca, err := rb.secrets.caSecret(cv.CACertificate, ns)
		if err != nil {
			st.addError(ErrTLS, reasonOf(err), "%s.caSecret: %v", field, err)
			return false
		}
		svh.ClientCA = ca
		rb.addSecret(ca)
	}
	auth := &ClientAuth{SkipVerify: cv.SkipClientCertValidation, Optional: cv.OptionalClientCertificate, CRLLeafOnly: cv.OnlyVerifyLeafCertCrl}
	if f := cv.ForwardClientCertificate; f != nil {
		auth.Forward = &ForwardClientCert{Subject: f.Subject, Cert: f.Cert, Chain: f.Chain, DNS: f.DNS, URI: f.URI}
	}
	if cv.CertificateRevocationList != "" {
		s, err := rb.secrets.lookup(cv.CertificateRevocationList, ns)
		if err != nil {
			st.addError(ErrTLS, reasonOf(err), "%s.crlSecret: %v", field, err)
			return false
		}
		auth.CRL = s.Data[CRLKey]
		if err := validateCRL(auth.CRL); err != nil {
			st.addError(ErrTLS, "SecretInvalid", "%s.crlSecret: Secret %s/%s: %s %v", field, s.Namespace, s.Name, CRLKey, err)
			return false
		}
	}
	if auth.SkipVerify || auth.Optional || auth.CRLLeafOnly || auth.CRL != nil || auth.Forward != nil {
		svh.ClientAuth = auth
	}
	return true
}

// validateCRL requires at least one PEM revocation list and nothing that
// fails to parse.
func validateCRL(b []byte) error {
	return validatePEM(b, "X509 CRL", "revocation list", func(der []byte) error {
		_, err := x509.ParseRevocationList(der)
		return err
	})
}
