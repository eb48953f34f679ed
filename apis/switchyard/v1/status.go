package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Status values of status.currentStatus.
const (
	StatusValid    = "valid"
	StatusInvalid  = "invalid"
	StatusOrphaned = "orphaned"
)

// ConditionValid is the condition type every Switchyard object carries.
const ConditionValid = "Valid"

// ConditionProgrammed is the condition type that says what the data plane
// did with an HTTPProxy or ExtensionService: True once every connected
// node that receives its resources acknowledged their current versions;
// False, reason Rejected, when a node rejected one (the message names the
// node, the resource and the client's error); Unknown while nodes have not
// answered yet (Pending), none is connected (NoNodes) or nothing of the
// object is served (NotServed).
const ConditionProgrammed = "Programmed"

// HTTPProxyStatus reports what Switchyard made of an HTTPProxy.
type HTTPProxyStatus struct {
	// CurrentStatus is valid, invalid or orphaned.
	// +optional
	CurrentStatus string `json:"currentStatus,omitempty"`
	// Description is a one-line summary of CurrentStatus.
	// +optional
	Description string `json:"description,omitempty"`
	// Conditions carry every error and warning found, each naming the field.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []DetailedCondition `json:"conditions,omitempty"`
}

// DetailedCondition is a metav1.Condition that lists every problem found
// instead of the first one only.
type DetailedCondition struct {
	metav1.Condition `json:",inline"`
	// Errors made the object (or part of it) unusable.
	// +optional
	Errors []SubCondition `json:"errors,omitempty"`
	// Warnings did not stop the object from being served.
	// +optional
	Warnings []SubCondition `json:"warnings,omitempty"`
}

// SubCondition is one problem.
type SubCondition struct {
	// Type groups problems, such as ServiceError or TLSError.
	Type string `json:"type"`
	// Reason is a CamelCase identifier of the problem.
	Reason string `json:"reason"`
	// Message names the field and says what is wrong with it.
	Message string `json:"message"`
}
