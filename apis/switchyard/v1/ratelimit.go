package v1

// RateLimitPolicy limits the rate of requests to a virtual host or a
// route. A route's policy replaces its virtual host's.
type RateLimitPolicy struct {
	// Local limits requests in each Envoy on its own, with a token bucket
	// per virtual host or route.
	// +optional
	Local *LocalRateLimitPolicy `json:"local,omitempty"`

	// Global asks an external rate limit service (Envoy's
	// envoy.service.ratelimit.v3, the ExtensionService named by
	// --rate-limit-service) about each request, with the descriptors built
	// from it. Without a working service a global policy fails closed
	// unless --rate-limit-fail-open; see site/rate-limiting.md.
	// +optional
	Global *GlobalRateLimitPolicy `json:"global,omitempty"`
}

// GlobalRateLimitPolicy lists the descriptors sent to the rate limit
// service, or opts out of the global policy.
type GlobalRateLimitPolicy struct {
	// Disabled opts a route (or host) out of global rate limiting.
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// Descriptors are sent with each request; the service limits by each.
	// The limits on the lists keep the CRD's validation rules (of header
	// conditions, nested here under routes) within the apiserver's cost
	// budget.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Descriptors []RateLimitDescriptor `json:"descriptors,omitempty"`
}

// RateLimitDescriptor is an ordered list of entries.
type RateLimitDescriptor struct {
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Entries []RateLimitDescriptorEntry `json:"entries,omitempty"`
}

// RateLimitDescriptorEntry is one entry of a descriptor. Exactly one field
// is set.
type RateLimitDescriptorEntry struct {
	// +optional
	GenericKey *GenericKeyDescriptor `json:"genericKey,omitempty"`
	// +optional
	RequestHeader *RequestHeaderDescriptor `json:"requestHeader,omitempty"`
	// +optional
	RequestHeaderValueMatch *RequestHeaderValueMatchDescriptor `json:"requestHeaderValueMatch,omitempty"`
	// +optional
	RemoteAddress *RemoteAddressDescriptor `json:"remoteAddress,omitempty"`
}

// GenericKeyDescriptor is a fixed key and value.
type GenericKeyDescriptor struct {
	// Key defaults to "generic_key".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Key string `json:"key,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`
}

// RequestHeaderDescriptor is a request header's value under a key; a
// request without the header sends no descriptor.
type RequestHeaderDescriptor struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	HeaderName string `json:"headerName,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	DescriptorKey string `json:"descriptorKey,omitempty"`
}

// RequestHeaderValueMatchDescriptor is a fixed value, sent when the
// request's headers match (or, with expectMatch false, do not).
type RequestHeaderValueMatchDescriptor struct {
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	Headers []HeaderMatchCondition `json:"headers,omitempty"`
	// ExpectMatch; default true. A pointer, unlike Contour's bool, so that
	// an unset field means true wherever the object is read from.
	// +optional
	ExpectMatch *bool `json:"expectMatch,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`
}

// RemoteAddressDescriptor is the client address under "remote_address".
type RemoteAddressDescriptor struct{}

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
