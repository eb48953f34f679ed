// Package v2 is a fixture that uses v1.
//
// +groupName=example.dev
package v2

import v1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"

// Gadget is a kind.
//
// +kubebuilder:object:root=true
type Gadget struct {
	v1.WidgetSpec `json:",inline"`
	Count         *int32 `json:"count,omitempty"`
}
