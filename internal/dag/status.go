package dag

import (
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Status is what the builder concluded about one object it read.
type Status struct {
	Key        objects.Key
	Generation int64
	// State is switchyardv1.StatusValid, StatusInvalid or StatusOrphaned.
	State       string
	Description string
	Errors      []switchyardv1.SubCondition
	Warnings    []switchyardv1.SubCondition
}

// Sub-condition types group problems by the part of the object at fault.
const (
	ErrSpec         = "SpecError"
	ErrVirtualHost  = "VirtualHostError"
	ErrTLS          = "TLSError"
	ErrInclude      = "IncludeError"
	ErrRoute        = "RouteError"
	ErrService      = "ServiceError"
	ErrTCPProxy     = "TCPProxyError"
	ErrAuth         = "AuthError"
	ErrDelegation   = "DelegationError"
	ErrIngressClass = "IngressClassError"
)

// StatusUpdate is what one build changed in the statuses: every status
// (All, after the first build), or the statuses recomputed and the keys
// of objects that no longer have one. Consumers that keep state per
// object (logs, the status writer) then do work in proportion to the
// change, not to the number of objects.
type StatusUpdate struct {
	All     bool
	Changed []*Status
	Removed []objects.Key
}
