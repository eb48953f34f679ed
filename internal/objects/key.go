package objects

import (
	"cmp"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Kind is the type of an object Switchyard reads.
type Kind uint8

// The kinds of object a snapshot holds.
const (
	KindHTTPProxy Kind = iota + 1
	KindExtensionService
	KindTLSCertificateDelegation
	KindService
	KindEndpointSlice
	KindSecret
	KindNode
	KindNamespace
	KindTrafficSplit
	KindHTTPRouteGroup
	KindTrafficTarget
	KindPod
)

var kindNames = map[Kind]string{
	KindHTTPProxy:                "HTTPProxy",
	KindExtensionService:         "ExtensionService",
	KindTLSCertificateDelegation: "TLSCertificateDelegation",
	KindService:                  "Service",
	KindEndpointSlice:            "EndpointSlice",
	KindSecret:                   "Secret",
	KindNode:                     "Node",
	KindNamespace:                "Namespace",
	KindTrafficSplit:             "TrafficSplit",
	KindHTTPRouteGroup:           "HTTPRouteGroup",
	KindTrafficTarget:            "TrafficTarget",
	KindPod:                      "Pod",
}

// String returns the Kubernetes kind name.
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// KindFromString maps a Kubernetes kind name to a Kind.
func KindFromString(s string) (Kind, bool) {
	for k, name := range kindNames {
		if name == s {
			return k, true
		}
	}
	return 0, false
}

// Key names one object. Nodes and Namespaces have no namespace.
type Key struct {
	Kind      Kind
	Namespace string
	Name      string
}

// ClusterScoped reports whether objects of a kind have no namespace.
func (k Kind) ClusterScoped() bool {
	return k == KindNode || k == KindNamespace
}

// NewKey builds a key from a kind and a namespaced name.
func NewKey(kind Kind, nn types.NamespacedName) Key {
	return Key{Kind: kind, Namespace: nn.Namespace, Name: nn.Name}
}

// NamespacedName returns the key's namespace and name.
func (k Key) NamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: k.Namespace, Name: k.Name}
}

// String renders the key as Kind namespace/name.
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Kind.String() + " " + k.Name
	}
	return k.Kind.String() + " " + k.Namespace + "/" + k.Name
}

// Compare orders keys by kind, namespace and name, for deterministic
// output: it returns -1, 0 or +1 as k sorts before, with or after o, and
// suits slices.SortFunc.
func (k Key) Compare(o Key) int {
	return cmp.Or(cmp.Compare(k.Kind, o.Kind), cmp.Compare(k.Namespace, o.Namespace), cmp.Compare(k.Name, o.Name))
}

// Less reports whether k sorts before o in the order of Compare.
func (k Key) Less(o Key) bool {
	return k.Compare(o) < 0
}

// DrainAnnotation, set to "true" on a Service or a Node, reports every
// endpoint of that Service or on that Node as DRAINING: Envoy sends it no
// new requests while those in flight finish, and gRPC and DNS clients stop
// picking it.
const DrainAnnotation = "switchyard.dev/drain"

// Drained reports whether an object's annotations drain it.
func Drained(annotations map[string]string) bool {
	return annotations[DrainAnnotation] == "true"
}
