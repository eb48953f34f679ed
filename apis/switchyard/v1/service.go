package v1

// Service is a Kubernetes Service that receives a share of a route's or a
// tcpproxy's traffic.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.mirror) && self.mirror) || has(self.weight)",message="a mirror service must set weight: the percentage of requests to mirror (0-100)"
// +kubebuilder:validation:XValidation:rule="!(has(self.mirror) && self.mirror) || self.weight <= 100",message="a mirror service's weight is a percentage and must be at most 100"
// +kubebuilder:validation:XValidation:rule="!(has(self.mirror) && self.mirror) || !has(self.priority)",message="a mirror service cannot have a priority"
type Service struct {
	// Name of a Service in the proxy's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Port of the Service (spec.ports[].port, not the target port).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// Weight is this service's share of the traffic relative to the other
	// services of the same priority. When no service of a route sets a
	// weight, the traffic is split equally; when some do, an unset weight
	// is 0. For a mirror, weight is the percentage of requests copied, and
	// must be given: Switchyard never mirrors 100 % unless asked to.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4294967295
	Weight *int64 `json:"weight,omitempty"`

	// Priority is the failover level: 0 (default) is the primary; a
	// service of priority N takes traffic only when the levels below N
	// cannot carry it. Levels must be contiguous from 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=127
	Priority *int32 `json:"priority,omitempty"`

	// Protocol used to reach the service: h2c (HTTP/2 in clear text), h2
	// (HTTP/2 over TLS) or tls (HTTP/1.1 over TLS). Default HTTP/1.1.
	// +optional
	// +kubebuilder:validation:Enum=h2;h2c;tls
	Protocol *string `json:"protocol,omitempty"`

	// Mirror copies requests to this service and discards its responses.
	// +optional
	Mirror bool `json:"mirror,omitempty"`

	// RequestHeadersPolicy changes request headers sent to this service.
	// Setting it gives the service a cluster of its own: see the clusters
	// and weights guide.
	// +optional
	RequestHeadersPolicy *HeadersPolicy `json:"requestHeadersPolicy,omitempty"`

	// ResponseHeadersPolicy changes response headers from this service.
	// +optional
	ResponseHeadersPolicy *HeadersPolicy `json:"responseHeadersPolicy,omitempty"`

	// CookieRewritePolicies rewrite cookie attributes in this service's
	// responses, over the route's for the same cookie. Like header
	// policies, they give the service a cluster of its own.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	CookieRewritePolicies []CookieRewritePolicy `json:"cookieRewritePolicies,omitempty"`

	// HealthPort is the Service port the active health checks go to,
	// when it is not Port.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	HealthPort *int32 `json:"healthPort,omitempty"`

	// SlowStartPolicy ramps new endpoints' traffic up. Services of one
	// route with different policies get clusters of their own.
	// +optional
	SlowStartPolicy *SlowStartPolicy `json:"slowStartPolicy,omitempty"`

	// UpstreamValidation verifies the service's certificate when the
	// protocol is tls or h2.
	// +optional
	UpstreamValidation *UpstreamValidation `json:"validation,omitempty"`
}

// UpstreamValidation verifies an upstream's TLS certificate.
type UpstreamValidation struct {
	// CACertificate is a Secret holding ca.crt, in the referrer's namespace
	// or delegated as "namespace/name".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	CACertificate string `json:"caSecret"`
	// SubjectName must appear in the certificate's subject alternative
	// names; it is also sent as SNI.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SubjectName string `json:"subjectName"`
	// SubjectNames, when set, are the names of which the certificate must
	// carry at least one, as in Contour; the first must be subjectName,
	// which stays the SNI.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=253
	SubjectNames []string `json:"subjectNames,omitempty"`
}
