package xdsres

// Programmed is what the data plane did with one object's configuration:
// the Programmed condition of its status, beside Valid, which is what
// Switchyard thinks of the object.
type Programmed struct {
	// Status is True, False or Unknown (metav1.ConditionStatus values).
	Status  string
	Reason  string
	Message string
}

// The reasons of a Programmed condition.
const (
	// ReasonProgrammed: every connected node that receives the object's
	// resources acknowledged their current versions.
	ReasonProgrammed = "Programmed"
	// ReasonRejected: a node NACKed a current version of one of them.
	ReasonRejected = "Rejected"
	// ReasonPending: some node has not acknowledged the current versions
	// yet.
	ReasonPending = "Pending"
	// ReasonNoNodes: no connected node receives any of them.
	ReasonNoNodes = "NoNodes"
	// ReasonNotServed: the object has no resources to be served (it is
	// invalid, say, or an included proxy no root includes).
	ReasonNotServed = "NotServed"
	// ReasonNoDataPlane: the status comes from something that serves no
	// node (`switchyard render`).
	ReasonNoDataPlane = "NoDataPlane"
)

// NoDataPlane is the Programmed condition where nothing is served.
var NoDataPlane = Programmed{Status: "Unknown", Reason: ReasonNoDataPlane, Message: "not served to any data plane: run switchyard serve"}
