// Package v1 is a fixture.
//
// +groupName=example.dev
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Unused comes last: no kind refers to it.
type Unused struct{}

// Widget is a kind.
//
// +kubebuilder:object:root=true
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec"`
}

// WidgetList is left out.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	Items []Widget `json:"items"`
}

// WidgetSpec is reached from Widget.
//
// +kubebuilder:validation:XValidation:rule="has(self.a)",message="a is \"required\" here"
type WidgetSpec struct {
	// Name is <name>.<namespace>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:Pattern=`^(((\d*(\.\d*)?h)|(\d*(\.\d*)?ms))+|infinity)$`
	Timeout string `json:"timeout,omitempty"`
	// Colors is a list.
	//
	// Second paragraph.
	// +kubebuilder:validation:MaxItems=3
	Colors []Color `json:"colors,omitempty"`
}

// Color is a string type.
//
// +kubebuilder:validation:Enum=red;"blue"
type Color string
