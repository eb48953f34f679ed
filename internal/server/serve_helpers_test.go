package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// Helpers for the tests that stop and start the control plane, secure it,
// or load it: controlPlane (helpers_test.go) runs one for the whole test;
// these let a test choose the address and the config, and stop it early.

// running is a control plane started by startServer.
type running struct {
	*server.Server
	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan error
}

// startServer runs the control plane on addr ("127.0.0.1:0" for any
// port), serving dir, with the config changed by mutate (may be nil).
func startServer(t *testing.T, dir, addr string, mutate func(*server.Config)) *running {
	t.Helper()
	cfg := server.Config{
		XDSAddress: addr,
		Holdoff:    20 * time.Millisecond,
		MaxWait:    100 * time.Millisecond,
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	cfg.Pipeline.Translator = translator.DefaultOptions()
	if mutate != nil {
		mutate(&cfg)
	}
	r := runSource(t, server.New(cfg), &server.DirSource{Root: dir, Log: cfg.Log})
	// The first build of the largest inputs here (a 10,000-route host)
	// takes over a minute under -race on a busy 2-core machine.
	waitFor(t, 3*time.Minute, "the xDS server to listen", func() bool { return r.XDSAddr() != nil })
	return r
}

// runSource runs s on src until the test ends (or stop).
func runSource(t *testing.T, s *server.Server, src server.Source) *running {
	t.Helper()
	r := &running{Server: s, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- r.Run(ctx, src) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop ends the control plane and waits for Run to return.
func (r *running) stop(t *testing.T) {
	r.stopOnce.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("control plane: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("the control plane did not stop within 15s")
		}
	})
}

// dialXDS opens a client connection to addr with the given options
// (insecure credentials when none).
func dialXDS(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// sotwOnce opens a state-of-the-world ADS stream, asks for names of typ
// (a wildcard when none) and returns the first response, or an error when
// none comes within d.
func sotwOnce(ctx context.Context, cc *grpc.ClientConn, node *envoy_config_core_v3.Node, typ string, d time.Duration, names ...string) (*envoy_service_discovery_v3.DiscoveryResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: typ, ResourceNames: names}); err != nil {
		return nil, err
	}
	resp, err := st.Recv()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	return resp, nil
}

// sotwADS opens a state-of-the-world ADS stream to the control plane,
// closed when the test ends, and a receiver reading it.
func sotwADS(t *testing.T, s *server.Server) (envoy_service_discovery_v3.AggregatedDiscoveryService_StreamAggregatedResourcesClient, *receiver[*envoy_service_discovery_v3.DiscoveryResponse]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(dialXDS(t, s.XDSAddr().String())).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st, receive(st.Recv)
}
