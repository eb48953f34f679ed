// Package v1alpha1 holds Switchyard's alpha API: ExtensionService, a gRPC
// service (such as an external authorization server) that Envoy calls.
//
// +kubebuilder:object:generate=true
// +groupName=switchyard.dev
package v1alpha1
