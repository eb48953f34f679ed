package v1

// ClientValidationOptions are Contour's client certificate options, with
// its field names.
type ClientValidationOptions struct {
	// SkipClientCertValidation asks for a client certificate without
	// verifying it; the certificate can still be forwarded.
	// +optional
	SkipClientCertValidation bool `json:"skipClientCertValidation,omitempty"`

	// ForwardClientCertificate adds the x-forwarded-client-cert header
	// with the chosen details of the client certificate.
	// +optional
	ForwardClientCertificate *ClientCertificateDetails `json:"forwardClientCertificate,omitempty"`

	// CertificateRevocationList is a Secret holding crl.pem, the
	// revocation lists of the CA's chain, in the proxy's namespace or
	// delegated as "namespace/name".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	CertificateRevocationList string `json:"crlSecret,omitempty"`

	// OnlyVerifyLeafCertCrl checks only the client certificate itself
	// against the revocation lists, not its chain.
	// +optional
	OnlyVerifyLeafCertCrl bool `json:"crlOnlyVerifyLeafCert,omitempty"`

	// OptionalClientCertificate lets clients without a certificate in;
	// one that is presented must still verify.
	// +optional
	OptionalClientCertificate bool `json:"optionalClientCertificate,omitempty"`
}

// ClientCertificateDetails chooses what x-forwarded-client-cert carries
// besides the certificate's hash.
type ClientCertificateDetails struct {
	// +optional
	Subject bool `json:"subject,omitempty"`
	// Cert is the whole client certificate, URL-encoded PEM.
	// +optional
	Cert bool `json:"cert,omitempty"`
	// Chain is the whole chain, URL-encoded PEM.
	// +optional
	Chain bool `json:"chain,omitempty"`
	// +optional
	DNS bool `json:"dns,omitempty"`
	// +optional
	URI bool `json:"uri,omitempty"`
}
