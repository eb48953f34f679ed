package switchyard

import (
	"testing"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/xdstest"
)

// Short names for the proto types the tests build.
type (
	envoyHealth     = envoy_config_core_v3.HealthStatus
	envoyLbEndpoint = envoy_config_endpoint_v3.LbEndpoint
	envoyCLA        = envoy_config_endpoint_v3.ClusterLoadAssignment
	envoyPolicy     = envoy_config_endpoint_v3.ClusterLoadAssignment_Policy
)

// Proto builders: the tests write xDS input the way a control plane sends
// it and go through the real decoding.

const (
	healthy   = envoy_config_core_v3.HealthStatus_HEALTHY
	unknown   = envoy_config_core_v3.HealthStatus_UNKNOWN
	degraded  = envoy_config_core_v3.HealthStatus_DEGRADED
	draining  = envoy_config_core_v3.HealthStatus_DRAINING
	unhealthy = envoy_config_core_v3.HealthStatus_UNHEALTHY
)

// The builders of xdstest, under short names.
var (
	ep         = xdstest.Endpoint
	loc        = xdstest.Locality
	cla        = xdstest.Assignment
	edsCluster = xdstest.Cluster
)

// newTestEntry decodes an assignment into a table entry.
func newTestEntry(t testing.TB, localityWeighted bool, c *envoy_config_endpoint_v3.ClusterLoadAssignment) *entry {
	t.Helper()
	a, err := decodeAssignment(c, "v1")
	if err != nil {
		t.Fatalf("decodeAssignment: %v", err)
	}
	return newEntry(&clusterInfo{name: c.GetClusterName(), serviceName: c.GetClusterName(), version: "v1", localityWeighted: localityWeighted}, a)
}

// response wraps resources in a DiscoveryResponse of their type.
func response(typeURL, version, nonce string, msgs ...proto.Message) *envoy_service_discovery_v3.DiscoveryResponse {
	resp := &envoy_service_discovery_v3.DiscoveryResponse{TypeUrl: typeURL, VersionInfo: version, Nonce: nonce}
	for _, m := range msgs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			panic(err)
		}
		resp.Resources = append(resp.Resources, &anypb.Any{TypeUrl: "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName()), Value: b})
	}
	return resp
}

func cdsResponse(version string, clusters ...*envoy_config_cluster_v3.Cluster) *envoy_service_discovery_v3.DiscoveryResponse {
	msgs := make([]proto.Message, len(clusters))
	for i, c := range clusters {
		msgs[i] = c
	}
	return response(typeCluster, version, "n-cds-"+version, msgs...)
}

func edsResponse(version string, assigns ...*envoy_config_endpoint_v3.ClusterLoadAssignment) *envoy_service_discovery_v3.DiscoveryResponse {
	msgs := make([]proto.Message, len(assigns))
	for i, c := range assigns {
		msgs[i] = c
	}
	return response(typeEndpoint, version, "n-eds-"+version, msgs...)
}

// testConfig is DefaultConfig for zone lb.example.org. with a control
// plane that is never dialled.
func testConfig() Config {
	return DefaultConfig([]string{"lb.example.org."}, "127.0.0.1:1")
}

// newFed returns a plugin fed the given clusters and assignments directly
// through the client's response handling, without a stream.
func newFed(t testing.TB, cfg Config, clusters []*envoy_config_cluster_v3.Cluster, assigns ...*envoy_config_endpoint_v3.ClusterLoadAssignment) *Switchyard {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s.client.apply(cdsResponse("c1", clusters...))
	s.client.apply(edsResponse("e1", assigns...))
	if !s.Ready() {
		t.Fatalf("not ready after clusters and endpoints were applied")
	}
	return s
}

type envoyNamedPort = envoy_config_core_v3.SocketAddress_NamedPort

func withWeight(e *envoy_config_endpoint_v3.LbEndpoint, w uint32) *envoy_config_endpoint_v3.LbEndpoint {
	e.LoadBalancingWeight = wrapperspb.UInt32(w)
	return e
}
