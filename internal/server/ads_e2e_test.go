package server_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/status"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/server"
)

var envoyNode = &envoy_config_core_v3.Node{Id: "envoy-e2e", UserAgentName: "envoy"}

// receiver reads a stream on one goroutine, so that waiting for a message
// with a timeout never leaves a second reader behind.
type receiver[T any] struct {
	ch chan result[T]
}

type result[T any] struct {
	v   T
	err error
}

func receive[T any](recv func() (T, error)) *receiver[T] {
	r := &receiver[T]{ch: make(chan result[T], 16)}
	go func() {
		for {
			v, err := recv()
			r.ch <- result[T]{v, err}
			if err != nil {
				return
			}
		}
	}()
	return r
}

// next returns the next message, or false when none came in time.
func (r *receiver[T]) next(d time.Duration) (T, bool, error) {
	select {
	case res := <-r.ch:
		return res.v, true, res.err
	case <-time.After(d):
		var zero T
		return zero, false, nil
	}
}

// TestDeltaAndSotwSeeTheSame subscribes to every type Envoy uses with a
// state-of-the-world and an incremental client: both must receive the
// same resources, byte for byte.
func TestDeltaAndSotwSeeTheSame(t *testing.T) {
	dir, _, _ := weightedSetup(t)
	s := controlPlane(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, typ := range []string{resource.ListenerType, resource.ClusterType, resource.ScopedRouteType} {
		sotw := sotwWildcard(ctx, t, s, typ)
		delta := deltaWildcard(ctx, t, s, typ)
		if len(sotw) == 0 || fmt.Sprint(sotw) != fmt.Sprint(delta) {
			t.Errorf("%s: sotw %v, delta %v", typ, sotw, delta)
		}
	}
}

func sotwWildcard(ctx context.Context, t *testing.T, s *server.Server, typ string) []string {
	t.Helper()
	resp, err := sotwOnce(ctx, dialXDS(t, s.XDSAddr().String()), envoyNode, typ, 5*time.Second)
	if err != nil {
		t.Fatalf("sotw %s: %v", typ, err)
	}
	var out []string
	for _, a := range resp.GetResources() {
		out = append(out, fmt.Sprintf("%x", sha256.Sum256(a.GetValue())))
	}
	sort.Strings(out)
	return out
}

func deltaWildcard(ctx context.Context, t *testing.T, s *server.Server, typ string) []string {
	t.Helper()
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(dialXDS(t, s.XDSAddr().String())).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: typ}); err != nil {
		t.Fatal(err)
	}
	resp, ok, err := receive(st.Recv).next(5 * time.Second)
	if err != nil || !ok {
		t.Fatalf("delta %s: ok=%v err=%v", typ, ok, err)
	}
	var out []string
	for _, r := range resp.GetResources() {
		out = append(out, fmt.Sprintf("%x", sha256.Sum256(r.GetResource().GetValue())))
	}
	sort.Strings(out)
	return out
}

// TestNACKIsCountedAndNotResent rejects the clusters the server sends: the
// rejection must show in the metrics, and the server must wait for new
// content instead of sending the rejected version again.
func TestNACKIsCountedAndNotResent(t *testing.T) {
	dir, _, _ := weightedSetup(t)
	s := controlPlane(t, dir)
	st, rx := sotwADS(t, s)
	_ = st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType})
	first, ok, err := rx.next(5 * time.Second)
	if err != nil || !ok {
		t.Fatalf("no clusters: %v", err)
	}
	_ = st.Send(&envoy_service_discovery_v3.DiscoveryRequest{
		Node: envoyNode, TypeUrl: resource.ClusterType, ResponseNonce: first.GetNonce(),
		ErrorDetail: &status.Status{Code: 3, Message: "e2e: rejected on purpose"},
	})
	if again, got, _ := rx.next(2 * time.Second); got {
		t.Fatalf("the server re-sent the rejected clusters (version %s)", again.GetVersionInfo())
	}
	line := metric(t, s, `switchyard_xds_nacks_total{group="envoy",type="envoy.config.cluster.v3.Cluster"}`)
	if line == "" || line[len(line)-2:] != " 1" {
		t.Fatalf("NACK metric: %q", line)
	}
	// New content is sent, so a client can recover from a bad push.
	writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", map[string]int{"a": 1}))
	next, got, err := rx.next(5 * time.Second)
	if err != nil || !got || next.GetVersionInfo() == first.GetVersionInfo() {
		t.Fatalf("new content after a NACK: got=%v err=%v", got, err)
	}
}
