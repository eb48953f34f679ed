package v1alpha4

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HTTPRouteGroup names sets of HTTP requests that TrafficSplits and
// TrafficTargets refer to by match name.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=smi
type HTTPRouteGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HTTPRouteGroupSpec `json:"spec"`
}

// HTTPRouteGroupSpec is the group's matches.
type HTTPRouteGroupSpec struct {
	// Matches are the named request matches.
	// +optional
	Matches []HTTPMatch `json:"matches,omitempty"`
}

// HTTPMatch is one named match: a request matches when every condition
// set holds.
type HTTPMatch struct {
	// Name is how splits and targets refer to the match.
	Name string `json:"name"`
	// Methods are the HTTP methods matched; empty or "*" matches all.
	// +optional
	Methods []string `json:"methods,omitempty"`
	// PathRegex is a regular expression the whole path must match.
	// +optional
	PathRegex string `json:"pathRegex,omitempty"`
	// Headers are header names and the regular expressions their values
	// must match.
	// +optional
	Headers map[string]string `json:"headers,omitempty"`
}

// HTTPRouteGroupList is a list of HTTPRouteGroups.
//
// +kubebuilder:object:root=true
type HTTPRouteGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HTTPRouteGroup `json:"items"`
}
