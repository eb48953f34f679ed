package xdscache

import (
	"strings"

	"google.golang.org/protobuf/proto"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
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

// GroupOf maps a connecting node to its group: node metadata
// switchyard.dev/group (envoy, grpc, dns or mesh) decides; else the user agent
// ("envoy" is Envoy, "gRPC ..." a proxyless gRPC client); else a node id of
// "coredns" is a DNS balancer; else the node is treated as Envoy. A
// request without a node (go-control-plane hands one an empty node) is in
// no group: Envoy's group receives private keys, so the default must not
// cover a client that said nothing about itself.
func GroupOf(node *envoy_config_core_v3.Node) Group {
	if !HasNode(node) {
		return GroupNone
	}
	if v := node.GetMetadata().GetFields()[GroupMetadataKey]; v != nil {
		switch g := Group(v.GetStringValue()); g {
		case GroupEnvoy, GroupGRPC, GroupDNS, GroupMesh:
			return g
		}
	}
	switch ua := node.GetUserAgentName(); {
	case ua == "envoy":
		return GroupEnvoy
	case strings.HasPrefix(ua, "gRPC"):
		return GroupGRPC
	}
	if node.GetId() == DNSNodeID {
		return GroupDNS
	}
	return GroupEnvoy
}

// HasNode reports whether a request identified its node at all: nil and
// an empty node (what go-control-plane substitutes when a stream's first
// request has none) do not.
func HasNode(node *envoy_config_core_v3.Node) bool {
	return node != nil && proto.Size(node) > 0
}

// typeOrder is the order in which one update is pushed to a stream: what a
// resource refers to goes out before it (secrets and clusters before the
// listeners and routes that name them, clusters before their endpoints), so
// Envoy does not briefly route to something it does not know yet.
var typeOrder = []string{
	resource.SecretType,
	resource.ClusterType,
	resource.EndpointType,
	resource.ListenerType,
	resource.ScopedRouteType,
	resource.RouteType,
}

// fullState reports whether a state-of-the-world response of the type must
// carry every resource the client subscribes to: a Listener, Cluster or
// scope left out of such a response is deleted by the client.
func fullState(typeURL string) bool {
	switch typeURL {
	case resource.ListenerType, resource.ClusterType, resource.ScopedRouteType:
		return true
	}
	return false
}

// allowedTypes are the types each group may receive; Secrets go to Envoy
// only, and DNS balancers get nothing but clusters and endpoints.
var allowedTypes = map[Group]map[string]bool{
	GroupEnvoy: {resource.SecretType: true, resource.ClusterType: true, resource.EndpointType: true, resource.ListenerType: true, resource.ScopedRouteType: true, resource.RouteType: true},
	GroupGRPC:  {resource.ClusterType: true, resource.EndpointType: true, resource.ListenerType: true, resource.RouteType: true},
	GroupDNS:   {resource.ClusterType: true, resource.EndpointType: true},
	GroupMesh:  {resource.ClusterType: true, resource.EndpointType: true, resource.ListenerType: true, resource.RouteType: true},
}

// TypesOf lists the types a group receives, in push order.
func TypesOf(g Group) []string {
	var out []string
	for _, t := range typeOrder {
		if allowedTypes[g][t] {
			out = append(out, t)
		}
	}
	return out
}
