package v1

// HostPolicies are the traffic policies of a virtual host, with Contour's
// field names. They sit in a type of their own, inlined into VirtualHost,
// so that each policy's fields live in the file of that policy.
type HostPolicies struct {
	IPFilterPolicies `json:",inline"`

	// CORSPolicy answers cross-origin preflights and adds CORS headers to
	// every response of the host; see site/cors.md.
	// +optional
	CORSPolicy *CORSPolicy `json:"corsPolicy,omitempty"`

	// RateLimitPolicy limits the requests of the host; see
	// site/rate-limiting.md.
	// +optional
	RateLimitPolicy *RateLimitPolicy `json:"rateLimitPolicy,omitempty"`

	// JWTProviders verify JSON Web Tokens on the host's routes; requires
	// TLS. See site/jwt.md.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	JWTProviders []JWTProvider `json:"jwtProviders,omitempty"`
}

// RoutePolicies are the traffic policies of a route, inlined into Route.
// Each replaces the virtual host's policy of the same kind for that route.
type RoutePolicies struct {
	IPFilterPolicies `json:",inline"`

	// RateLimitPolicy replaces the host's rate limit for this route.
	// +optional
	RateLimitPolicy *RateLimitPolicy `json:"rateLimitPolicy,omitempty"`

	// JWTVerificationPolicy picks the JWT provider for this route, or
	// turns verification off.
	// +optional
	JWTVerificationPolicy *JWTVerificationPolicy `json:"jwtVerificationPolicy,omitempty"`
}
