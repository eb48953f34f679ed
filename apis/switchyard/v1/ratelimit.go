package v1

// RateLimitPolicy limits the rate of requests to a virtual host or a
// route. A route's policy replaces its virtual host's.
type RateLimitPolicy struct {
	// Local limits requests in each Envoy on its own, with a token bucket
	// per virtual host or route.
	// +optional
	Local *LocalRateLimitPolicy `json:"local,omitempty"`
}

// LocalRateLimitPolicy is a token bucket: it holds requests+burst tokens,
// refilled with requests tokens every unit; a request without a token is
// answered responseStatusCode.
type LocalRateLimitPolicy struct {
	// Requests is how many requests each unit of time allows.
	// +kubebuilder:validation:Minimum=1
	Requests uint32 `json:"requests"`

	// Unit is the period requests applies to: second, minute or hour.
	// +kubebuilder:validation:Enum=second;minute;hour
	Unit string `json:"unit"`

	// Burst is how many requests beyond Requests a full bucket allows at
	// once.
	// +optional
	Burst uint32 `json:"burst,omitempty"`

	// ResponseStatusCode answers limited requests; default 429.
	// +optional
	// +kubebuilder:validation:Minimum=400
	// +kubebuilder:validation:Maximum=599
	ResponseStatusCode uint32 `json:"responseStatusCode,omitempty"`

	// ResponseHeadersToAdd are added to the answers of limited requests.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	ResponseHeadersToAdd []HeaderValue `json:"responseHeadersToAdd,omitempty"`
}
