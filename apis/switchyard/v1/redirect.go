package v1

// RedirectResponseCode is a redirect status Envoy may follow itself.
//
// +kubebuilder:validation:Enum=301;302;303;307;308
type RedirectResponseCode int32

// HTTPInternalRedirectPolicy has Envoy follow the upstream's redirects
// itself, as Contour's field of the same name: the client receives the
// response of the redirect's target instead of the redirect.
type HTTPInternalRedirectPolicy struct {
	// MaxInternalRedirects is how many redirects one request may follow;
	// default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxInternalRedirects *int32 `json:"maxInternalRedirects,omitempty"`

	// RedirectResponseCodes are the statuses followed; default 302 only.
	// +optional
	// +kubebuilder:validation:MaxItems=5
	RedirectResponseCodes []RedirectResponseCode `json:"redirectResponseCodes,omitempty"`

	// AllowCrossSchemeRedirect says whether a redirect may change the
	// scheme: Never (default), Always, or SafeOnly (https requests may be
	// redirected to http or https, http ones to http only).
	// +optional
	// +kubebuilder:validation:Enum=Always;Never;SafeOnly
	AllowCrossSchemeRedirect string `json:"allowCrossSchemeRedirect,omitempty"`

	// DenyRepeatedRouteRedirect refuses a redirect to a route a previous
	// redirect of the same request already went through.
	// +optional
	DenyRepeatedRouteRedirect bool `json:"denyRepeatedRouteRedirect,omitempty"`
}
