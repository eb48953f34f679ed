package xdscache

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestRequestWithoutNodeIsDenied: go-control-plane hands a stream that
// never named its node an empty one; such a request must close the stream,
// not be served Envoy's resources (secrets among them).
func TestRequestWithoutNodeIsDenied(t *testing.T) {
	cb := newTestCallbacks(&bytes.Buffer{})
	f := cb.funcs()
	for _, node := range []*envoy_config_core_v3.Node{nil, {}} {
		err := f.StreamRequestFunc(1, &envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.SecretType})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("sotw request with node %v: error %v, want InvalidArgument", node, err)
		}
		err = f.StreamDeltaRequestFunc(1, &envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: node, TypeUrl: resource.SecretType})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("delta request with node %v: error %v, want InvalidArgument", node, err)
		}
	}
	if err := f.StreamRequestFunc(2, &envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.SecretType}); err != nil {
		t.Errorf("a request with a node is denied: %v", err)
	}
	// A delta stream's later requests may leave the node out (Envoy's
	// set_node_on_first_message_only), and go-control-plane calls back
	// before it fills the node in: the stream's first node stands.
	if err := f.StreamDeltaRequestFunc(3, &envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType}); err != nil {
		t.Fatalf("a delta request with a node is denied: %v", err)
	}
	if err := f.StreamDeltaRequestFunc(3, &envoy_service_discovery_v3.DeltaDiscoveryRequest{TypeUrl: resource.SecretType}); err != nil {
		t.Errorf("a delta stream's later request without its node is denied: %v", err)
	}

	// Behind the callbacks, the cache serves such a request nothing.
	c := New()
	if err := c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", 1)}}); err != nil {
		t.Fatal(err)
	}
	ch := make(chan cache.Response, 1)
	req := &envoy_service_discovery_v3.DiscoveryRequest{Node: &envoy_config_core_v3.Node{}, TypeUrl: resource.ClusterType}
	if _, err := c.CreateWatch(req, stream.NewSotwSubscription(nil, true), ch); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		t.Fatalf("a request without a node was answered: %v", r)
	default:
	}
}

// TestDroppedResponsesAreCountedAndLogged fills a stream's buffer before
// the cache answers it: each drop is counted, and logged once per node and
// type.
func TestDroppedResponsesAreCountedAndLogged(t *testing.T) {
	var logs bytes.Buffer
	cb := newTestCallbacks(&logs)
	c := New()
	c.OnDropped(cb.dropped)
	if err := c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", 1)}}); err != nil {
		t.Fatal(err)
	}
	full := make(chan cache.Response, 1)
	full <- nil
	req := &envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType}
	for range 2 {
		if _, err := c.CreateWatch(req, stream.NewSotwSubscription(nil, true), full); err != nil {
			t.Fatal(err)
		}
	}
	fullDelta := make(chan cache.DeltaResponse, 1)
	fullDelta <- nil
	dreq := &envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType}
	if _, err := c.CreateDeltaWatch(dreq, stream.NewDeltaSubscription(nil, nil, nil, true), fullDelta); err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	if err := cb.metrics.Dropped.WithLabelValues("envoy", "envoy.config.cluster.v3.Cluster").Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 3 {
		t.Errorf("dropped responses counted: %v, want 3", got)
	}
	if n := strings.Count(logs.String(), "xDS response dropped"); n != 1 {
		t.Errorf("logged %d times, want once per node and type:\n%s", n, logs.String())
	}
}

func newTestCallbacks(logs *bytes.Buffer) *callbacks {
	return &callbacks{
		metrics: NewMetrics(nil),
		log:     slog.New(slog.NewTextHandler(logs, nil)),
		sotw:    map[int64]xdsres.Group{}, delta: map[int64]xdsres.Group{}, logged: map[string]bool{}, ctxs: map[streamKey]context.Context{},
	}
}
