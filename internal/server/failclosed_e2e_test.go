package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// TestNoNodeIsDenied asks for secrets over a real stream without saying
// which node it is: the stream must close with InvalidArgument instead of
// being served as Envoy, the one group that receives private keys.
func TestNoNodeIsDenied(t *testing.T) {
	dir, _, _ := weightedSetup(t)
	s := controlPlane(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ads := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(dialXDS(t, s.XDSAddr().String()))
	st, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Send(&envoy_service_discovery_v3.DiscoveryRequest{TypeUrl: resource.ClusterType})
	if _, ok, err := receive(st.Recv).next(5 * time.Second); !ok || grpcstatus.Code(err) != codes.InvalidArgument {
		t.Fatalf("sotw stream without a node: answered=%v error=%v, want InvalidArgument", ok, err)
	}
	dst, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = dst.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType})
	if _, ok, err := receive(dst.Recv).next(5 * time.Second); !ok || grpcstatus.Code(err) != codes.InvalidArgument {
		t.Fatalf("delta stream without a node: answered=%v error=%v, want InvalidArgument", ok, err)
	}

	// A stream that named its node may leave it out later, as Envoy does
	// with set_node_on_first_message_only.
	named, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rx := receive(named.Recv)
	_ = named.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType})
	if _, ok, err := rx.next(5 * time.Second); !ok || err != nil {
		t.Fatalf("clusters: answered=%v error=%v", ok, err)
	}
	_ = named.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{TypeUrl: resource.ListenerType})
	if _, ok, err := rx.next(5 * time.Second); !ok || err != nil {
		t.Fatalf("listeners asked for without repeating the node: answered=%v error=%v", ok, err)
	}
}
