// Package v1alpha3 holds the Service Mesh Interface's TrafficTarget
// (access.smi-spec.io/v1alpha3), who may call the pods running as a
// ServiceAccount, defined here with the SMI schema.
//
// +kubebuilder:object:generate=true
// +groupName=access.smi-spec.io
package v1alpha3
