package v1alpha3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrafficTarget allows the pods running as the source ServiceAccounts to
// call those running as the destination one. A mesh Service whose pods
// are the destination of no TrafficTarget is open to every caller, as SMI
// says; once one names them, every other caller is denied.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=smi
type TrafficTarget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TrafficTargetSpec `json:"spec"`
}

// TrafficTargetSpec is the destination, its allowed sources and the
// requests they may make.
type TrafficTargetSpec struct {
	// Destination is the ServiceAccount whose pods are called.
	Destination IdentityBindingSubject `json:"destination"`
	// Sources are the ServiceAccounts whose pods may call them.
	// +optional
	Sources []IdentityBindingSubject `json:"sources,omitempty"`
	// Rules are the requests the sources may make; empty allows all.
	// +optional
	Rules []TrafficTargetRule `json:"rules,omitempty"`
}

// IdentityBindingSubject names a ServiceAccount.
type IdentityBindingSubject struct {
	// Kind is ServiceAccount.
	Kind string `json:"kind"`
	// Name is the ServiceAccount's name.
	Name string `json:"name"`
	// Namespace is the ServiceAccount's namespace; the TrafficTarget's
	// when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// TrafficTargetRule names an HTTPRouteGroup (or TCPRoute) and which of
// its matches apply.
type TrafficTargetRule struct {
	// Kind is HTTPRouteGroup or TCPRoute.
	Kind string `json:"kind"`
	// Name names the route group in the TrafficTarget's namespace.
	Name string `json:"name"`
	// Matches are names of the group's matches; empty means all of them.
	// +optional
	Matches []string `json:"matches,omitempty"`
}

// TrafficTargetList is a list of TrafficTargets.
//
// +kubebuilder:object:root=true
type TrafficTargetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrafficTarget `json:"items"`
}
