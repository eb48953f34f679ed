package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HTTPProxy is how an application team exposes its Services. A root proxy
// (one with a virtualhost) owns a host name; it may delegate parts of its URL
// space to proxies in other namespaces through includes.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,path=httpproxies,shortName=syproxy;syproxies,singular=httpproxy
// +kubebuilder:printcolumn:name="FQDN",type="string",JSONPath=".spec.virtualhost.fqdn",description="Fully qualified domain name"
// +kubebuilder:printcolumn:name="TLS Secret",type="string",JSONPath=".spec.virtualhost.tls.secretName",description="Secret with the TLS certificate"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.currentStatus",description="valid, invalid or orphaned"
// +kubebuilder:printcolumn:name="Status Description",type="string",JSONPath=".status.description",description="What is wrong, if anything"
// +kubebuilder:printcolumn:name="Programmed",type="string",JSONPath=".status.conditions[?(@.type==\"Programmed\")].status",description="True once every connected node acknowledged the proxy's configuration, False when one rejected it"
type HTTPProxy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HTTPProxySpec `json:"spec"`

	// +optional
	Status HTTPProxyStatus `json:"status,omitempty"`
}

// HTTPProxyList is a list of HTTPProxy objects.
//
// +kubebuilder:object:root=true
type HTTPProxyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HTTPProxy `json:"items"`
}

// HTTPProxySpec is what an HTTPProxy asks for.
//
// +kubebuilder:validation:XValidation:rule="!has(self.virtualhost) || !has(self.virtualhost.tls) || !has(self.virtualhost.tls.passthrough) || !self.virtualhost.tls.passthrough || has(self.tcpproxy)",message="virtualhost.tls.passthrough requires tcpproxy"
// +kubebuilder:validation:XValidation:rule="!has(self.virtualhost) || !has(self.virtualhost.authorization) || has(self.virtualhost.tls)",message="virtualhost.authorization requires virtualhost.tls"
type HTTPProxySpec struct {
	// IngressClassName selects which Switchyard deployment serves this proxy.
	// A controller started with --ingress-class-name serves only proxies that
	// name that class; one started without it serves only proxies without one.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	IngressClassName string `json:"ingressClassName,omitempty"`

	// VirtualHost makes this a root proxy for one host name. Root proxies may
	// live only in the controller's root namespaces.
	// +optional
	VirtualHost *VirtualHost `json:"virtualhost,omitempty"`

	// Routes are matched in order of specificity (longest path first, then
	// the number of header and query conditions), not in list order.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Routes []Route `json:"routes,omitempty"`

	// TCPProxy forwards the decrypted (or, with passthrough, the still
	// encrypted) TCP stream of the virtual host to Services.
	// +optional
	TCPProxy *TCPProxy `json:"tcpproxy,omitempty"`

	// Includes delegate the routes that match the include's conditions to
	// another proxy, possibly in another namespace.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Includes []Include `json:"includes,omitempty"`
}

// VirtualHost is the host name a root proxy serves, with its TLS and
// authorization settings.
type VirtualHost struct {
	// Fqdn is the fully qualified host name, lowercase, without a port.
	// "*.example.com" is a wildcard host for the names one label longer;
	// an exact host wins over it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Fqdn string `json:"fqdn"`

	// TLS terminates (or passes through) TLS on the HTTPS listener for this
	// host, selected by SNI.
	// +optional
	TLS *TLS `json:"tls,omitempty"`

	// Authorization sends every request of this host to an external
	// authorization server before it reaches a route. It requires TLS.
	// +optional
	Authorization *AuthorizationServer `json:"authorization,omitempty"`

	HostPolicies `json:",inline"`
}

// TLS configures the HTTPS side of a virtual host.
//
// +kubebuilder:validation:XValidation:rule="has(self.passthrough) && self.passthrough ? !has(self.secretName) : has(self.secretName)",message="exactly one of secretName and passthrough must be set"
// +kubebuilder:validation:XValidation:rule="!(has(self.passthrough) && self.passthrough) || !has(self.clientValidation)",message="clientValidation cannot be used with passthrough"
type TLS struct {
	// SecretName is a kubernetes.io/tls Secret, "name" in the proxy's
	// namespace or "namespace/name" when the owner delegated it with a
	// TLSCertificateDelegation.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	SecretName string `json:"secretName,omitempty"`

	// MinimumProtocolVersion is the lowest TLS version accepted: "1.2"
	// (default) or "1.3".
	// +optional
	// +kubebuilder:validation:Enum="1.2";"1.3"
	MinimumProtocolVersion string `json:"minimumProtocolVersion,omitempty"`

	// MaximumProtocolVersion is the highest TLS version accepted: "1.2" or
	// "1.3" (default).
	// +optional
	// +kubebuilder:validation:Enum="1.2";"1.3"
	MaximumProtocolVersion string `json:"maximumProtocolVersion,omitempty"`

	// Passthrough forwards the encrypted stream to the tcpproxy services
	// without terminating TLS.
	// +optional
	Passthrough bool `json:"passthrough,omitempty"`

	// ClientValidation requires clients to present a certificate signed by
	// the given CA.
	// +optional
	ClientValidation *DownstreamValidation `json:"clientValidation,omitempty"`

	// EnableFallbackCertificate also serves the host to TLS clients that
	// send no SNI, or a server name no host claims, with the certificate
	// given by `switchyard serve --fallback-certificate NAMESPACE/NAME`
	// (delegated to this namespace when it lives in another). As in
	// Contour, it cannot be used with clientValidation, authorization, JWT
	// providers, passthrough or tcpproxy: those clients all share one
	// filter chain, which would skip each host's own checks.
	// +optional
	EnableFallbackCertificate bool `json:"enableFallbackCertificate,omitempty"`
}

// DownstreamValidation requires and verifies client certificates, with
// Contour's options (see clientvalidation.go).
//
// +kubebuilder:validation:XValidation:rule="has(self.caSecret) || (has(self.skipClientCertValidation) && self.skipClientCertValidation)",message="caSecret is required unless skipClientCertValidation is true"
// +kubebuilder:validation:XValidation:rule="!has(self.crlSecret) || has(self.caSecret)",message="crlSecret requires caSecret"
type DownstreamValidation struct {
	// CACertificate is a Secret holding ca.crt, in the proxy's namespace or
	// delegated as "namespace/name".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	CACertificate string `json:"caSecret,omitempty"`

	ClientValidationOptions `json:",inline"`
}

// Include delegates part of a proxy's URL space to another proxy.
type Include struct {
	// Name of the included HTTPProxy.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the included HTTPProxy; the including proxy's namespace
	// when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Conditions are prepended to every route of the included proxy.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Conditions []MatchCondition `json:"conditions,omitempty"`
}

// TCPProxy forwards a TLS virtual host's stream at the TCP level.
//
// +kubebuilder:validation:XValidation:rule="has(self.services) != has(self.include)",message="exactly one of services and include must be set"
type TCPProxy struct {
	// LoadBalancerPolicy picks an endpoint for each connection.
	// +optional
	LoadBalancerPolicy *LoadBalancerPolicy `json:"loadBalancerPolicy,omitempty"`

	// Services receive the connections, split by weight.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Services []Service `json:"services,omitempty"`

	// Include delegates the tcpproxy to another proxy's tcpproxy.
	// +optional
	Include *TCPProxyInclude `json:"include,omitempty"`

	// HealthCheckPolicy actively checks endpoints with TCP connects.
	// +optional
	HealthCheckPolicy *TCPHealthCheckPolicy `json:"healthCheckPolicy,omitempty"`

	// IdleTimeout closes a connection that has sent and received nothing
	// for this long, as a duration such as "30m"; "0s" or "infinity" never
	// closes it. Default: Envoy's, 1h. It is the host's own setting: an
	// included proxy's is not read.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	IdleTimeout string `json:"idleTimeout,omitempty"`

	// MaxConnections is the most connections open at once to this host on
	// each Envoy; further ones are closed as they arrive. Unset: no limit
	// beyond Envoy's own. It is the host's own setting.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	MaxConnections *int64 `json:"maxConnections,omitempty"`

	// AccessLog logs each connection to Envoy's standard output when it
	// closes. It is the host's own setting.
	// +optional
	AccessLog *TCPAccessLog `json:"accessLog,omitempty"`

	// ClientCertificate names a kubernetes.io/tls Secret ("name", or
	// "namespace/name" when delegated) whose certificate and key Envoy
	// presents to the backends, for backends that require mutual TLS. The
	// services must use protocol tls. With include, the included proxy's
	// is used, as its services are.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ClientCertificate string `json:"clientCertificate,omitempty"`
}

// TCPAccessLog is the access log of a tcpproxy host.
type TCPAccessLog struct {
	// Format is an Envoy format string, such as
	// "%START_TIME% %DOWNSTREAM_REMOTE_ADDRESS% %UPSTREAM_HOST% %BYTES_SENT%\n":
	// text with %COMMAND%, %COMMAND(ARGUMENT)% or %COMMAND(ARGUMENT):LENGTH%
	// operators, and %% for a percent sign. A format that Envoy would
	// reject makes the proxy invalid, with the operator named.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Format string `json:"format"`
}

// TCPProxyInclude names the proxy whose tcpproxy serves this one.
type TCPProxyInclude struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// AuthorizationServer points a virtual host at an ExtensionService that
// implements Envoy's envoy.service.auth.v3.Authorization API.
//
// +kubebuilder:validation:XValidation:rule="has(self.extensionRef) || (has(self.authPolicy) && has(self.authPolicy.disabled) && self.authPolicy.disabled)",message="extensionRef is required unless authPolicy.disabled is true (which opts the host out of the global authorization server)"
type AuthorizationServer struct {
	// ExtensionServiceRef names the ExtensionService. It may be left out
	// only to opt out of the controller's global authorization server,
	// with authPolicy.disabled set.
	// +optional
	ExtensionServiceRef *ExtensionServiceReference `json:"extensionRef,omitempty"`

	// ResponseTimeout bounds each authorization call, as a duration such as
	// "500ms". Default 2s.
	// +optional
	// +kubebuilder:validation:Pattern=`^(((\d*(\.\d*)?h)|(\d*(\.\d*)?m)|(\d*(\.\d*)?s)|(\d*(\.\d*)?ms)|(\d*(\.\d*)?us)|(\d*(\.\d*)?µs)|(\d*(\.\d*)?ns))+|infinity|infinite)$`
	ResponseTimeout string `json:"responseTimeout,omitempty"`

	// FailOpen lets requests through when the authorization server cannot
	// be reached. The default, false, answers them with 403 instead.
	// +optional
	FailOpen bool `json:"failOpen,omitempty"`

	// AuthPolicy is the host's default; routes override it.
	// +optional
	AuthPolicy *AuthorizationPolicy `json:"authPolicy,omitempty"`

	// WithRequestBody sends the request body along with the headers.
	// +optional
	WithRequestBody *AuthorizationServerBufferSettings `json:"withRequestBody,omitempty"`
}

// ExtensionServiceReference names an ExtensionService.
type ExtensionServiceReference struct {
	// APIVersion of the referent; switchyard.dev/v1alpha1 when empty.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// Namespace of the ExtensionService; the proxy's own when empty. Another
	// namespace works only when the ExtensionService lists the proxy's
	// namespace in spec.allowedNamespaces.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// AuthorizationPolicy turns authorization off, or passes context entries to
// the authorization server.
type AuthorizationPolicy struct {
	// Disabled skips authorization.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// Context entries are sent to the authorization server with each check.
	// A route's entries are merged over its virtual host's.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Context map[string]string `json:"context,omitempty"`
}

// AuthorizationServerBufferSettings sends the request body to the
// authorization server.
type AuthorizationServerBufferSettings struct {
	// MaxRequestBytes is how much of the body is buffered; default 1024.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=67108864
	MaxRequestBytes *int32 `json:"maxRequestBytes,omitempty"`
	// AllowPartialMessage sends the first MaxRequestBytes of a longer body
	// instead of answering 413.
	// +optional
	AllowPartialMessage bool `json:"allowPartialMessage,omitempty"`
	// PackAsBytes sends the body as raw bytes instead of a UTF-8 string.
	// +optional
	PackAsBytes bool `json:"packAsBytes,omitempty"`
}
