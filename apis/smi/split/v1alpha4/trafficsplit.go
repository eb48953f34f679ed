package v1alpha4

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// TrafficSplit splits the traffic sent to a root Service among backend
// Services by weight. Switchyard makes one cluster of it, one weighted
// locality per backend and zone, so a backend with no healthy endpoints
// gives its share to the others.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=smi
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.currentStatus",description="valid or invalid"
// +kubebuilder:printcolumn:name="Status Description",type="string",JSONPath=".status.description",description="What is wrong, if anything"
type TrafficSplit struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TrafficSplitSpec `json:"spec"`
	// Status is Switchyard's addition to SMI's schema (see TrafficSplitStatus).
	// +optional
	Status TrafficSplitStatus `json:"status,omitempty"`
}

// TrafficSplitStatus is what Switchyard found of the TrafficSplit, as on an HTTPProxy: a backend missing, weights
// invalid, a second split of one root.
// SMI's schema has no status; it is Switchyard's addition, written only
// where the CRD has the status subresource, as those of examples/deploy
// do (SMI's upstream CRDs do not, and then nothing is written).
type TrafficSplitStatus struct {
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

// TrafficSplitSpec is the root Service, its backends and, optionally, the
// requests the split applies to.
type TrafficSplitSpec struct {
	// Service is the root Service clients address, in the split's
	// namespace.
	Service string `json:"service"`
	// Backends share the root's traffic by weight.
	Backends []TrafficSplitBackend `json:"backends"`
	// Matches, when set, restrict the split to requests matching one of
	// the named HTTPRouteGroup matches; other requests go to the root
	// Service itself.
	// +optional
	Matches []MatchReference `json:"matches,omitempty"`
}

// TrafficSplitBackend is one backend Service and its weight.
type TrafficSplitBackend struct {
	// Service is a Service in the split's namespace.
	Service string `json:"service"`
	// Weight is the backend's share relative to the others' weights.
	Weight int `json:"weight"`
}

// MatchReference has the shape of core/v1 TypedLocalObjectReference,
// which SMI uses for matches.
type MatchReference struct {
	// APIGroup is specs.smi-spec.io.
	// +optional
	APIGroup *string `json:"apiGroup,omitempty"`
	// Kind is HTTPRouteGroup.
	Kind string `json:"kind"`
	// Name names an HTTPRouteGroup in the split's namespace.
	Name string `json:"name"`
}

// TrafficSplitList is a list of TrafficSplits.
//
// +kubebuilder:object:root=true
type TrafficSplitList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrafficSplit `json:"items"`
}
