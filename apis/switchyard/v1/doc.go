// Package v1 holds the stable Switchyard API: HTTPProxy, which application
// teams use to route traffic to their Services, and TLSCertificateDelegation,
// which lets a Secret's owner share it with proxies in other namespaces.
//
// Field names follow Contour's projectcontour.io/v1 API wherever the meaning
// is the same, so that a Contour user migrates by changing apiVersion. Where
// Contour's API has a known trap (a mirror weight of 0 meaning 100 %, optional
// numbers that cannot be told apart from zero) the field is a pointer here and
// the documentation says how it differs.
//
// +kubebuilder:object:generate=true
// +groupName=switchyard.dev
package v1
