package v1

// IPFilterSource says which address of a request an IP filter rule reads.
//
// +kubebuilder:validation:Enum=Peer;Remote
type IPFilterSource string

// The addresses an IP filter rule may read.
const (
	// IPFilterSourcePeer is the address of the connection's other end,
	// which is a load balancer's when one sits in front of Envoy.
	IPFilterSourcePeer IPFilterSource = "Peer"
	// IPFilterSourceRemote is the client address Envoy derives from the
	// connection and X-Forwarded-For (with use_remote_address, the peer
	// unless a trusted hop added the header).
	IPFilterSourceRemote IPFilterSource = "Remote"
)

// IPFilterPolicy is one rule of an IP allow or deny list.
type IPFilterPolicy struct {
	// Source is the address the rule reads: Peer or Remote.
	Source IPFilterSource `json:"source"`

	// CIDR is an IPv4 or IPv6 range such as "10.0.0.0/8", or a single
	// address, which means that address alone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	CIDR string `json:"cidr"`
}

// IPFilterPolicies are the IP allow and deny lists of a virtual host or a
// route. At most one of them may be set; a route's list replaces its
// virtual host's, whichever kind either is.
type IPFilterPolicies struct {
	// IPAllowFilterPolicy lets through only requests that match one of the
	// rules; every other request is answered 403.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	IPAllowFilterPolicy []IPFilterPolicy `json:"ipAllowPolicy,omitempty"`

	// IPDenyFilterPolicy answers 403 to requests that match one of the
	// rules and lets every other request through.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	IPDenyFilterPolicy []IPFilterPolicy `json:"ipDenyPolicy,omitempty"`
}
