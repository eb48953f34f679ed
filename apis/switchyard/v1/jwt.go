package v1

// JWTProvider verifies JSON Web Tokens issued by one issuer, with the keys
// of a remote JWKS.
type JWTProvider struct {
	// Name identifies the provider in routes' jwtVerificationPolicy,
	// unique within the virtual host.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Default verifies every route that names no provider and does not
	// disable verification. At most one provider is the default.
	// +optional
	Default bool `json:"default,omitempty"`

	// Issuer, when set, must equal the token's iss claim.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Issuer string `json:"issuer,omitempty"`

	// Audiences, when set, must include one of the token's aud claims.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=1024
	Audiences []string `json:"audiences,omitempty"`

	// RemoteJWKS is where the provider's signing keys are fetched.
	RemoteJWKS RemoteJWKS `json:"remoteJWKS"`

	// ForwardJWT keeps the token in the request sent to the backend;
	// otherwise it is removed once verified.
	// +optional
	ForwardJWT bool `json:"forwardJWT,omitempty"`
}

// RemoteJWKS is a JSON Web Key Set served over HTTP(S).
type RemoteJWKS struct {
	// URI of the key set, http or https.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URI string `json:"uri"`

	// Timeout bounds each fetch, as a duration such as "1s"; default 1s.
	// +optional
	Timeout string `json:"timeout,omitempty"`

	// CacheDuration is how long fetched keys are kept; Envoy's default
	// (10 minutes) when unset.
	// +optional
	CacheDuration string `json:"cacheDuration,omitempty"`

	// DNSLookupFamily chooses the addresses the JWKS host resolves to:
	// auto (default), v4, v6 or all.
	// +optional
	// +kubebuilder:validation:Enum=auto;v4;v6;all
	DNSLookupFamily string `json:"dnsLookupFamily,omitempty"`

	// UpstreamValidation verifies the JWKS server's certificate; https
	// only.
	// +optional
	UpstreamValidation *UpstreamValidation `json:"validation,omitempty"`
}

// JWTVerificationPolicy chooses how a route's requests are verified.
type JWTVerificationPolicy struct {
	// Require names the provider that verifies the route, instead of the
	// virtual host's default.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Require string `json:"require,omitempty"`

	// Disabled turns verification off for the route.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}
