// Package v1alpha4 holds the Service Mesh Interface's HTTPRouteGroup
// (specs.smi-spec.io/v1alpha4), the request matches a TrafficSplit may be
// restricted to, defined here with the SMI schema.
//
// +kubebuilder:object:generate=true
// +groupName=specs.smi-spec.io
package v1alpha4
