package v1alpha3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// TrafficTarget allows the pods running as the source ServiceAccounts to
// call those running as the destination one. A mesh Service whose pods
// are the destination of no TrafficTarget is open to every caller, as SMI
// says; once one names them, every other caller is denied.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=smi
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.currentStatus",description="valid or invalid"
// +kubebuilder:printcolumn:name="Status Description",type="string",JSONPath=".status.description",description="What is wrong, if anything"
type TrafficTarget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TrafficTargetSpec `json:"spec"`
	// Status is Switchyard's addition to SMI's schema (see TrafficTargetStatus).
	// +optional
	Status TrafficTargetStatus `json:"status,omitempty"`
}

// TrafficTargetStatus is what Switchyard found of the TrafficTarget, as on an HTTPProxy: a subject of another kind,
// a name missing, a rule not supported or naming no HTTPRouteGroup.
// SMI's schema has no status; it is Switchyard's addition, written only
// where the CRD has the status subresource, as those of examples/deploy
// do (SMI's upstream CRDs do not, and then nothing is written).
type TrafficTargetStatus struct {
	// CurrentStatus is valid or invalid.
	// +optional
	CurrentStatus string `json:"currentStatus,omitempty"`
	// Description is a one-line summary of CurrentStatus.
	// +optional
	Description string `json:"description,omitempty"`
	// Conditions carry every error and warning found, each naming the
	// field.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []switchyardv1.DetailedCondition `json:"conditions,omitempty"`
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
