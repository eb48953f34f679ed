package v1

// CORSHeaderValue is an HTTP method or header name in a CORS policy, or
// "*" for any.
//
// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9!#$%&'*+.^_|~-]+$`
// +kubebuilder:validation:MaxLength=256
type CORSHeaderValue string

// CORSPolicy answers browsers' cross-origin preflight requests and adds
// the CORS headers to the responses of a virtual host, with Envoy's CORS
// filter.
type CORSPolicy struct {
	// AllowCredentials lets browsers send cookies and credentials with
	// cross-origin requests (Access-Control-Allow-Credentials).
	// +optional
	AllowCredentials bool `json:"allowCredentials,omitempty"`

	// AllowOrigin lists the origins allowed: "*" for any, an exact origin
	// such as "https://app.example.com", or else an RE2 expression that
	// must match the whole origin.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	AllowOrigin []string `json:"allowOrigin"`

	// AllowMethods lists the methods allowed (Access-Control-Allow-Methods).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	AllowMethods []CORSHeaderValue `json:"allowMethods"`

	// AllowHeaders lists the request headers allowed
	// (Access-Control-Allow-Headers).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	AllowHeaders []CORSHeaderValue `json:"allowHeaders,omitempty"`

	// ExposeHeaders lists the response headers a browser may show the page
	// (Access-Control-Expose-Headers).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	ExposeHeaders []CORSHeaderValue `json:"exposeHeaders,omitempty"`

	// MaxAge is how long a browser may cache a preflight answer, a
	// duration such as "10m"; "0s" asks it not to cache. Unset leaves the
	// browser's default.
	// +optional
	// +kubebuilder:validation:Pattern=`^(((\d*(\.\d*)?h)|(\d*(\.\d*)?m)|(\d*(\.\d*)?s)|(\d*(\.\d*)?ms)|(\d*(\.\d*)?us)|(\d*(\.\d*)?µs)|(\d*(\.\d*)?ns))+)$`
	MaxAge string `json:"maxAge,omitempty"`

	// AllowPrivateNetwork answers Private Network Access preflights
	// (Access-Control-Allow-Private-Network).
	// +optional
	AllowPrivateNetwork bool `json:"allowPrivateNetwork,omitempty"`
}
