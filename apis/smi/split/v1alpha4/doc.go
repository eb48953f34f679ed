// Package v1alpha4 holds the Service Mesh Interface's TrafficSplit
// (split.smi-spec.io/v1alpha4), defined here with the SMI schema because the
// SMI SDK's module does not resolve: a manifest written for the SDK's types
// decodes into these unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=split.smi-spec.io
package v1alpha4
