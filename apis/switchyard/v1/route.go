package v1

// Route sends the requests that match its conditions to Services, or
// answers them itself with a redirect or a fixed response.
//
// +kubebuilder:validation:XValidation:rule="[has(self.services) && size(self.services) > 0, has(self.requestRedirectPolicy), has(self.directResponsePolicy)].filter(x, x).size() == 1",message="exactly one of services, requestRedirectPolicy and directResponsePolicy must be set"
type Route struct {
	// Name identifies the route, unique within its proxy. Named routes get
	// their own DNS name, <name>.<proxy>.<namespace>, in the DNS balancer.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// Conditions a request must all meet. A route without a path condition
	// matches the prefix "/".
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Conditions []MatchCondition `json:"conditions,omitempty"`

	// Services receive the matching requests, split by weight. Services
	// marked mirror get a copy of the requests instead.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Services []Service `json:"services,omitempty"`

	// EnableWebsockets allows the WebSocket upgrade on this route.
	// +optional
	EnableWebsockets bool `json:"enableWebsockets,omitempty"`

	// PermitInsecure serves this route over plain HTTP too, on a host with
	// TLS; otherwise plain-HTTP requests are redirected to HTTPS.
	// +optional
	PermitInsecure bool `json:"permitInsecure,omitempty"`

	// AuthPolicy overrides the virtual host's authorization policy.
	// +optional
	AuthPolicy *AuthorizationPolicy `json:"authPolicy,omitempty"`

	// +optional
	TimeoutPolicy *TimeoutPolicy `json:"timeoutPolicy,omitempty"`
	// +optional
	RetryPolicy *RetryPolicy `json:"retryPolicy,omitempty"`
	// +optional
	HealthCheckPolicy *HTTPHealthCheckPolicy `json:"healthCheckPolicy,omitempty"`
	// +optional
	LoadBalancerPolicy *LoadBalancerPolicy `json:"loadBalancerPolicy,omitempty"`
	// +optional
	PathRewritePolicy *PathRewritePolicy `json:"pathRewritePolicy,omitempty"`
	// RequestHeadersPolicy changes request headers for every service.
	// +optional
	RequestHeadersPolicy *HeadersPolicy `json:"requestHeadersPolicy,omitempty"`
	// ResponseHeadersPolicy changes response headers for every service.
	// +optional
	ResponseHeadersPolicy *HeadersPolicy `json:"responseHeadersPolicy,omitempty"`
	// +optional
	RequestRedirectPolicy *HTTPRequestRedirectPolicy `json:"requestRedirectPolicy,omitempty"`
	// CookieRewritePolicies rewrite cookie attributes in the responses.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	CookieRewritePolicies []CookieRewritePolicy `json:"cookieRewritePolicies,omitempty"`
	// InternalRedirectPolicy has Envoy follow the services' redirects.
	// +optional
	InternalRedirectPolicy *HTTPInternalRedirectPolicy `json:"internalRedirectPolicy,omitempty"`
	// +optional
	DirectResponsePolicy *HTTPDirectResponsePolicy `json:"directResponsePolicy,omitempty"`

	RoutePolicies `json:",inline"`
}

// MatchCondition is one condition a request must meet. Exactly one field is
// set.
//
// +kubebuilder:validation:XValidation:rule="[has(self.prefix), has(self.exact), has(self.regex), has(self.header), has(self.queryParameter)].filter(x, x).size() == 1",message="exactly one of prefix, exact, regex, header and queryParameter must be set"
type MatchCondition struct {
	// Prefix matches a path prefix at segment boundaries: "/api" matches
	// "/api" and "/api/v1", not "/apis".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Prefix string `json:"prefix,omitempty"`
	// Exact matches the whole path.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Exact string `json:"exact,omitempty"`
	// Regex matches the whole path with an RE2 expression.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Regex string `json:"regex,omitempty"`
	// +optional
	Header *HeaderMatchCondition `json:"header,omitempty"`
	// +optional
	QueryParameter *QueryParameterMatchCondition `json:"queryParameter,omitempty"`
}

// HeaderMatchCondition matches a request header. Exactly one of the match
// fields is set.
//
// +kubebuilder:validation:XValidation:rule="[has(self.present) && self.present, has(self.notpresent) && self.notpresent, has(self.contains), has(self.notcontains), has(self.exact), has(self.notexact), has(self.regex)].filter(x, x).size() == 1",message="exactly one of present, notpresent, contains, notcontains, exact, notexact and regex must be set"
type HeaderMatchCondition struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^:?[A-Za-z0-9!#$%&'*+.^_|~-]+$`
	Name string `json:"name"`
	// +optional
	Present bool `json:"present,omitempty"`
	// +optional
	NotPresent bool `json:"notpresent,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Contains string `json:"contains,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	NotContains string `json:"notcontains,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Exact string `json:"exact,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	NotExact string `json:"notexact,omitempty"`
	// Regex matches the whole header value with an RE2 expression.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Regex string `json:"regex,omitempty"`
	// IgnoreCase compares contains, notcontains, exact and notexact without
	// regard to case.
	// +optional
	IgnoreCase bool `json:"ignoreCase,omitempty"`
}

// QueryParameterMatchCondition matches a query parameter. Exactly one of the
// match fields is set.
//
// +kubebuilder:validation:XValidation:rule="[has(self.exact), has(self.prefix), has(self.regex), has(self.present) && self.present].filter(x, x).size() == 1",message="exactly one of exact, prefix, regex and present must be set"
type QueryParameterMatchCondition struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Exact string `json:"exact,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Prefix string `json:"prefix,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Regex string `json:"regex,omitempty"`
	// +optional
	Present bool `json:"present,omitempty"`
	// +optional
	IgnoreCase bool `json:"ignoreCase,omitempty"`
}

// TimeoutPolicy bounds how long requests and connections may take. Values
// are durations such as "30s" or "infinity".
type TimeoutPolicy struct {
	// Response bounds the whole request, from the first byte received to
	// the last byte of the response. Default 15s.
	// +optional
	// +kubebuilder:validation:Pattern=`^(((\d*(\.\d*)?h)|(\d*(\.\d*)?m)|(\d*(\.\d*)?s)|(\d*(\.\d*)?ms)|(\d*(\.\d*)?us)|(\d*(\.\d*)?µs)|(\d*(\.\d*)?ns))+|infinity|infinite)$`
	Response string `json:"response,omitempty"`
	// Idle bounds the time a stream may stay without activity.
	// +optional
	// +kubebuilder:validation:Pattern=`^(((\d*(\.\d*)?h)|(\d*(\.\d*)?m)|(\d*(\.\d*)?s)|(\d*(\.\d*)?ms)|(\d*(\.\d*)?us)|(\d*(\.\d*)?µs)|(\d*(\.\d*)?ns))+|infinity|infinite)$`
	Idle string `json:"idle,omitempty"`
	// IdleConnection bounds the time an upstream connection may stay idle.
	// +optional
	// +kubebuilder:validation:Pattern=`^(((\d*(\.\d*)?h)|(\d*(\.\d*)?m)|(\d*(\.\d*)?s)|(\d*(\.\d*)?ms)|(\d*(\.\d*)?us)|(\d*(\.\d*)?µs)|(\d*(\.\d*)?ns))+|infinity|infinite)$`
	IdleConnection string `json:"idleConnection,omitempty"`
}

// RetryOn is a condition under which a request is retried.
//
// +kubebuilder:validation:Enum="5xx";gateway-error;reset;connect-failure;retriable-4xx;refused-stream;retriable-status-codes;retriable-headers;cancelled;deadline-exceeded;internal;resource-exhausted;unavailable
type RetryOn string

// RetryPolicy retries failed requests.
type RetryPolicy struct {
	// Count is the number of retries. Unset means 1; 0 turns retries off
	// (unlike Contour, where 0 also means 1).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Count *int32 `json:"count,omitempty"`
	// PerTryTimeout bounds each attempt.
	// +optional
	// +kubebuilder:validation:Pattern=`^(((\d*(\.\d*)?h)|(\d*(\.\d*)?m)|(\d*(\.\d*)?s)|(\d*(\.\d*)?ms)|(\d*(\.\d*)?us)|(\d*(\.\d*)?µs)|(\d*(\.\d*)?ns))+|infinity|infinite)$`
	PerTryTimeout string `json:"perTryTimeout,omitempty"`
	// RetryOn lists the conditions that trigger a retry; default "5xx".
	// +optional
	// +kubebuilder:validation:MaxItems=16
	RetryOn []RetryOn `json:"retryOn,omitempty"`
	// RetriableStatusCodes are retried when retryOn has
	// retriable-status-codes.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Minimum=100
	// +kubebuilder:validation:items:Maximum=599
	RetriableStatusCodes []int32 `json:"retriableStatusCodes,omitempty"`
}

// HTTPHealthCheckPolicy actively checks each endpoint with HTTP requests.
type HTTPHealthCheckPolicy struct {
	// Path requested on each endpoint.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path"`
	// Host header of the check; default "switchyard-health".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Host string `json:"host,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	IntervalSeconds *int64 `json:"intervalSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	UnhealthyThresholdCount *int64 `json:"unhealthyThresholdCount,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	HealthyThresholdCount *int64 `json:"healthyThresholdCount,omitempty"`
	// ExpectedStatuses are the statuses that count as healthy; default
	// 200 only.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	ExpectedStatuses []HTTPStatusRange `json:"expectedStatuses,omitempty"`
}

// TCPHealthCheckPolicy actively checks each endpoint with TCP connects.
type TCPHealthCheckPolicy struct {
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	IntervalSeconds *int64 `json:"intervalSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	UnhealthyThresholdCount *int64 `json:"unhealthyThresholdCount,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	HealthyThresholdCount *int64 `json:"healthyThresholdCount,omitempty"`
}

// LoadBalancerStrategy names how an endpoint is picked.
//
// +kubebuilder:validation:Enum=RoundRobin;Random;WeightedLeastRequest;Cookie;RequestHash
type LoadBalancerStrategy string

// The load-balancing strategies.
const (
	RoundRobin           LoadBalancerStrategy = "RoundRobin"
	Random               LoadBalancerStrategy = "Random"
	WeightedLeastRequest LoadBalancerStrategy = "WeightedLeastRequest"
	Cookie               LoadBalancerStrategy = "Cookie"
	RequestHash          LoadBalancerStrategy = "RequestHash"
)

// LoadBalancerPolicy picks an endpoint for each request or connection.
//
// +kubebuilder:validation:XValidation:rule="!has(self.requestHashPolicies) || self.strategy == 'RequestHash'",message="requestHashPolicies requires strategy RequestHash"
type LoadBalancerPolicy struct {
	// Strategy; default RoundRobin.
	// +optional
	Strategy LoadBalancerStrategy `json:"strategy,omitempty"`
	// RequestHashPolicies choose what the RequestHash strategy hashes.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	RequestHashPolicies []RequestHashPolicy `json:"requestHashPolicies,omitempty"`
}

// RequestHashPolicy is one input of the request hash. Exactly one of the
// options is set.
//
// +kubebuilder:validation:XValidation:rule="[has(self.headerHashOptions), has(self.queryParameterHashOptions), has(self.hashSourceIP) && self.hashSourceIP].filter(x, x).size() == 1",message="exactly one of headerHashOptions, queryParameterHashOptions and hashSourceIP must be set"
type RequestHashPolicy struct {
	// Terminal stops hashing at this policy when it produced a value.
	// +optional
	Terminal bool `json:"terminal,omitempty"`
	// +optional
	HeaderHashOptions *HeaderHashOptions `json:"headerHashOptions,omitempty"`
	// +optional
	QueryParameterHashOptions *QueryParameterHashOptions `json:"queryParameterHashOptions,omitempty"`
	// +optional
	HashSourceIP bool `json:"hashSourceIP,omitempty"`
}

// HeaderHashOptions hashes a request header.
type HeaderHashOptions struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	HeaderName string `json:"headerName"`
}

// QueryParameterHashOptions hashes a query parameter.
type QueryParameterHashOptions struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ParameterName string `json:"parameterName"`
}

// PathRewritePolicy rewrites the request path before it is forwarded.
type PathRewritePolicy struct {
	// ReplacePrefix replaces the matched path prefix.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	ReplacePrefix []ReplacePrefix `json:"replacePrefix,omitempty"`
}

// ReplacePrefix replaces a path prefix.
type ReplacePrefix struct {
	// Prefix selects which of the route's prefixes this rewrite applies to,
	// needed only when an include gives the route several.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Prefix string `json:"prefix,omitempty"`
	// Replacement for the matched prefix.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Replacement string `json:"replacement"`
}

// HeadersPolicy sets and removes headers.
type HeadersPolicy struct {
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Set []HeaderValue `json:"set,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	Remove []string `json:"remove,omitempty"`
}

// HeaderValue is a header name and the value to set.
type HeaderValue struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value"`
}

// HTTPRequestRedirectPolicy answers with a redirect.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.path) && has(self.prefix))",message="path and prefix are mutually exclusive"
type HTTPRequestRedirectPolicy struct {
	// +optional
	// +kubebuilder:validation:Enum=http;https
	Scheme *string `json:"scheme,omitempty"`
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostname *string `json:"hostname,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
	// StatusCode; default 302.
	// +optional
	// +kubebuilder:validation:Enum=301;302;303;307;308
	StatusCode *int32 `json:"statusCode,omitempty"`
	// Path replaces the whole path.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Path *string `json:"path,omitempty"`
	// Prefix replaces the matched prefix.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Prefix *string `json:"prefix,omitempty"`
}

// HTTPDirectResponsePolicy answers with a fixed status and body.
type HTTPDirectResponsePolicy struct {
	// +kubebuilder:validation:Minimum=200
	// +kubebuilder:validation:Maximum=599
	StatusCode int32 `json:"statusCode"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Body string `json:"body,omitempty"`
}
