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
