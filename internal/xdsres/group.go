package xdsres

import (
	"fmt"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Group is a consumer group: the kind of client a node is, which decides
// the shape of the resources it receives (site/architecture.md, decision 3).
type Group string

// The consumer groups. GroupNone is no group at all: what a request
// without a node maps to, and what receives nothing.
const (
	GroupEnvoy Group = "envoy"
	GroupGRPC  Group = "grpc"
	GroupDNS   Group = "dns"
	// GroupMesh is the mesh's node proxies: Envoys that receive the mesh
	// Services' listeners and nothing of the ingress.
	GroupMesh Group = "mesh"
	GroupNone Group = ""
)

// Groups lists every group, in a fixed order.
var Groups = []Group{GroupEnvoy, GroupGRPC, GroupDNS, GroupMesh}

// GroupMetadataKey is the node metadata field that names a node's group.
const GroupMetadataKey = "switchyard.dev/group"

// DNSNodeID is the node id that, without metadata, marks a DNS balancer.
const DNSNodeID = "coredns"

// TypeOrder is the order in which one update is pushed to a stream: what a
// resource refers to goes out before it (secrets and clusters before the
// listeners and routes that name them, clusters before their endpoints), so
// Envoy does not briefly route to something it does not know yet.
var TypeOrder = []string{
	resource.SecretType,
	resource.ClusterType,
	resource.EndpointType,
	resource.ListenerType,
	resource.ScopedRouteType,
	resource.RouteType,
}

// AllowedTypes are the types each group may receive; Secrets go to Envoy
// only, and DNS balancers get nothing but clusters and endpoints.
var AllowedTypes = map[Group]map[string]bool{
	GroupEnvoy: {resource.SecretType: true, resource.ClusterType: true, resource.EndpointType: true, resource.ListenerType: true, resource.ScopedRouteType: true, resource.RouteType: true},
	GroupGRPC:  {resource.ClusterType: true, resource.EndpointType: true, resource.ListenerType: true, resource.RouteType: true},
	GroupDNS:   {resource.ClusterType: true, resource.EndpointType: true},
	GroupMesh:  {resource.ClusterType: true, resource.EndpointType: true, resource.ListenerType: true, resource.RouteType: true},
}

// TypesOf lists the types a group receives, in push order.
func TypesOf(g Group) []string {
	var out []string
	for _, t := range TypeOrder {
		if AllowedTypes[g][t] {
			out = append(out, t)
		}
	}
	return out
}

// ShortType strips the type URL prefix, for metric labels and logs.
func ShortType(typeURL string) string {
	return strings.TrimPrefix(typeURL, "type.googleapis.com/")
}

// Names are the groups' names, in the order of Groups: for flags, help
// and messages.
func Names() []string {
	out := make([]string, len(Groups))
	for i, g := range Groups {
		out[i] = string(g)
	}
	return out
}

// ParseGroup returns the group of that name, or an error naming the
// groups there are.
func ParseGroup(name string) (Group, error) {
	for _, g := range Groups {
		if string(g) == name {
			return g, nil
		}
	}
	return GroupNone, fmt.Errorf("unknown consumer group %q: use one of %s", name, strings.Join(Names(), ", "))
}
