package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TLSCertificateDelegation lets the owner of a Secret allow proxies in other
// namespaces to use it, so a certificate never has to be copied.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,path=tlscertificatedelegations,shortName=sytlscerts,singular=tlscertificatedelegation
type TLSCertificateDelegation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TLSCertificateDelegationSpec `json:"spec"`

	// +optional
	Status TLSCertificateDelegationStatus `json:"status,omitempty"`
}

// TLSCertificateDelegationList is a list of TLSCertificateDelegation objects.
//
// +kubebuilder:object:root=true
type TLSCertificateDelegationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TLSCertificateDelegation `json:"items"`
}

// TLSCertificateDelegationSpec lists the delegated Secrets.
type TLSCertificateDelegationSpec struct {
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	Delegations []CertificateDelegation `json:"delegations"`
}

// CertificateDelegation shares one Secret of the delegation's namespace.
type CertificateDelegation struct {
	// SecretName of a Secret in the delegation's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`
	// TargetNamespaces may use the Secret; "*" means every namespace.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	TargetNamespaces []string `json:"targetNamespaces"`
}

// TLSCertificateDelegationStatus reports problems with a delegation.
type TLSCertificateDelegationStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []DetailedCondition `json:"conditions,omitempty"`
}
