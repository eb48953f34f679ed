package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// ExtensionService is a gRPC service that Envoy itself calls, such as an
// external authorization server. Its targets become one cluster whose
// weighted localities split the calls between them.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,path=extensionservices,shortName=syextsvc;syextsvcs,singular=extensionservice
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.currentStatus"
// +kubebuilder:printcolumn:name="Status Description",type="string",JSONPath=".status.description"
// +kubebuilder:printcolumn:name="Programmed",type="string",JSONPath=".status.conditions[?(@.type==\"Programmed\")].status",description="True once every connected node acknowledged the extension's configuration, False when one rejected it"
type ExtensionService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ExtensionServiceSpec `json:"spec"`

	// +optional
	Status ExtensionServiceStatus `json:"status,omitempty"`
}

// ExtensionServiceList is a list of ExtensionService objects.
//
// +kubebuilder:object:root=true
type ExtensionServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExtensionService `json:"items"`
}

// ExtensionServiceSpec describes how Envoy reaches the extension.
//
// +kubebuilder:validation:XValidation:rule="!has(self.validation) || !has(self.protocol) || self.protocol != 'h2c'",message="validation requires protocol h2 or tls: h2c is clear text"
type ExtensionServiceSpec struct {
	// Services in the ExtensionService's namespace that implement it.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Services []ExtensionServiceTarget `json:"services"`

	// Protocol: h2 (HTTP/2 over TLS, the default), h2c (HTTP/2 in clear
	// text) or tls (a synonym of h2).
	// +optional
	// +kubebuilder:validation:Enum=h2;h2c;tls
	Protocol *string `json:"protocol,omitempty"`

	// UpstreamValidation verifies the extension's certificate.
	// +optional
	UpstreamValidation *switchyardv1.UpstreamValidation `json:"validation,omitempty"`

	// +optional
	LoadBalancerPolicy *switchyardv1.LoadBalancerPolicy `json:"loadBalancerPolicy,omitempty"`

	// TimeoutPolicy: response bounds each call, idle each connection.
	// +optional
	TimeoutPolicy *switchyardv1.TimeoutPolicy `json:"timeoutPolicy,omitempty"`

	// +optional
	CircuitBreakerPolicy *CircuitBreakers `json:"circuitBreakerPolicy,omitempty"`

	// AllowedNamespaces may reference this ExtensionService from their
	// proxies, in addition to its own namespace; "*" allows every
	// namespace. An authorization server sees every request it checks, so
	// its owner decides who may send it traffic.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`
}

// ExtensionServiceTarget is one Service of an ExtensionService.
type ExtensionServiceTarget struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// Weight relative to the other targets of the same priority; when no
	// target sets one the split is equal.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4294967295
	Weight *int64 `json:"weight,omitempty"`
	// Priority is the failover level, 0 (default) for the primary.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=127
	Priority *int32 `json:"priority,omitempty"`
}

// CircuitBreakers cap the load Envoy puts on the extension. Unset fields
// keep Envoy's defaults.
type CircuitBreakers struct {
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4294967295
	MaxConnections *int64 `json:"maxConnections,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4294967295
	MaxPendingRequests *int64 `json:"maxPendingRequests,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4294967295
	MaxRequests *int64 `json:"maxRequests,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4294967295
	MaxRetries *int64 `json:"maxRetries,omitempty"`
}

// ExtensionServiceStatus reports what Switchyard made of an ExtensionService.
type ExtensionServiceStatus struct {
	// +optional
	CurrentStatus string `json:"currentStatus,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []switchyardv1.DetailedCondition `json:"conditions,omitempty"`
}
