package xdscache

import (
	"strings"

	"google.golang.org/protobuf/proto"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// GroupOf maps a connecting node to its group: node metadata
// switchyard.dev/group (envoy, grpc, dns or mesh) decides; else the user agent
// ("envoy" is Envoy, "gRPC ..." a proxyless gRPC client); else a node id of
// "coredns" is a DNS balancer; else the node is treated as Envoy. A
// request without a node (go-control-plane hands one an empty node) is in
// no group: Envoy's group receives private keys, so the default must not
// cover a client that said nothing about itself.
func GroupOf(node *envoy_config_core_v3.Node) xdsres.Group {
	if !HasNode(node) {
		return xdsres.GroupNone
	}
	if v := node.GetMetadata().GetFields()[xdsres.GroupMetadataKey]; v != nil {
		switch g := xdsres.Group(v.GetStringValue()); g {
		case xdsres.GroupEnvoy, xdsres.GroupGRPC, xdsres.GroupDNS, xdsres.GroupMesh:
			return g
		}
	}
	switch ua := node.GetUserAgentName(); {
	case ua == "envoy":
		return xdsres.GroupEnvoy
	case strings.HasPrefix(ua, "gRPC"):
		return xdsres.GroupGRPC
	}
	if node.GetId() == xdsres.DNSNodeID {
		return xdsres.GroupDNS
	}
	return xdsres.GroupEnvoy
}

// HasNode reports whether a request identified its node at all: nil and
// an empty node (what go-control-plane substitutes when a stream's first
// request has none) do not.
func HasNode(node *envoy_config_core_v3.Node) bool {
	return node != nil && proto.Size(node) > 0
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
