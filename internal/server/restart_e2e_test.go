package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// adsEvent is one response a reconnecting client received.
type adsEvent struct {
	conn      int // which connection, from 1
	version   string
	resources int
	removed   int
}

// reconnectingClient is an xDS client of one type that behaves as Envoy
// does when its control plane goes away: it reconnects (every 50ms here)
// and tells the new server what it holds — the version it last accepted
// (state of the world) or every resource's version (delta,
// initial_resource_versions) — and ACKs what it receives.
type reconnectingClient struct {
	addr  string
	typ   string
	delta bool
	node  *envoy_config_core_v3.Node

	mu       sync.Mutex
	conn     int
	version  string
	versions map[string]string
	events   []adsEvent
}

func startReconnecting(t *testing.T, addr, typ string, delta bool) *reconnectingClient {
	c := &reconnectingClient{addr: addr, typ: typ, delta: delta, node: envoyNode, versions: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			c.session(ctx, t)
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// session runs one connection until it fails.
func (c *reconnectingClient) session(ctx context.Context, t *testing.T) {
	cc, err := grpc.NewClient(c.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Error(err)
		return
	}
	defer cc.Close()
	ads := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc)
	c.mu.Lock()
	c.conn++
	conn := c.conn
	c.mu.Unlock()
	if c.delta {
		c.deltaSession(ctx, ads, conn)
		return
	}
	c.sotwSession(ctx, ads, conn)
}

func (c *reconnectingClient) sotwSession(ctx context.Context, ads envoy_service_discovery_v3.AggregatedDiscoveryServiceClient, conn int) {
	st, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return
	}
	c.mu.Lock()
	req := &envoy_service_discovery_v3.DiscoveryRequest{Node: c.node, TypeUrl: c.typ, VersionInfo: c.version}
	c.mu.Unlock()
	for {
		if err := st.Send(req); err != nil {
			return
		}
		resp, err := st.Recv()
		if err != nil {
			return
		}
		c.mu.Lock()
		c.version = resp.GetVersionInfo()
		c.events = append(c.events, adsEvent{conn: conn, version: resp.GetVersionInfo(), resources: len(resp.GetResources())})
		c.mu.Unlock()
		req = &envoy_service_discovery_v3.DiscoveryRequest{Node: c.node, TypeUrl: c.typ, VersionInfo: resp.GetVersionInfo(), ResponseNonce: resp.GetNonce()}
	}
}

func (c *reconnectingClient) deltaSession(ctx context.Context, ads envoy_service_discovery_v3.AggregatedDiscoveryServiceClient, conn int) {
	st, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		return
	}
	c.mu.Lock()
	initial := make(map[string]string, len(c.versions))
	for k, v := range c.versions {
		initial[k] = v
	}
	c.mu.Unlock()
	req := &envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: c.node, TypeUrl: c.typ, InitialResourceVersions: initial}
	for {
		if err := st.Send(req); err != nil {
			return
		}
		resp, err := st.Recv()
		if err != nil {
			return
		}
		c.mu.Lock()
		for _, r := range resp.GetResources() {
			c.versions[r.GetName()] = r.GetVersion()
		}
		for _, name := range resp.GetRemovedResources() {
			delete(c.versions, name)
		}
		c.events = append(c.events, adsEvent{conn: conn, version: resp.GetSystemVersionInfo(), resources: len(resp.GetResources()), removed: len(resp.GetRemovedResources())})
		c.mu.Unlock()
		req = &envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: c.node, TypeUrl: c.typ, ResponseNonce: resp.GetNonce()}
	}
}

// eventsSince returns the responses received on connection conn and
// later ones.
func (c *reconnectingClient) eventsSince(conn int) []adsEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []adsEvent
	for _, e := range c.events {
		if e.conn >= conn {
			out = append(out, e)
		}
	}
	return out
}

func (c *reconnectingClient) connections() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

func (c *reconnectingClient) heldVersions() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.version, c.versions)
}

// TestRestart stops the control plane while an Envoy-like state-of-the-
// world client, a delta client and a gRPC xDS client are connected, and
// starts it again on the same port. The raw clients reconnect and,
// versions being content hashes, the new server sees they are up to date:
// the state-of-the-world client gets nothing, the delta client's first
// response has no resources, and a client that connects fresh gets the
// version the old server had. A change made after the restart reaches all
// three, and the gRPC client's RPCs never fail throughout.
func TestRestart(t *testing.T) {
	dir, _, ids := weightedSetup(t)
	first := startServer(t, dir, "127.0.0.1:0", nil)
	addr := first.XDSAddr().String()
	sotw := startReconnecting(t, addr, resource.ClusterType, false)
	delta := startReconnecting(t, addr, resource.ClusterType, true)
	grpcC := grpcClient(t, first.Server, "app.example.com")
	warmUp(t, grpcC, ids...)
	waitFor(t, 30*time.Second, "both raw clients to hold the clusters", func() bool {
		return len(sotw.eventsSince(1)) > 0 && len(delta.eventsSince(1)) > 0
	})
	before := sotw.eventsSince(1)[0].version
	freshBefore := freshVersion(t, addr)
	loop := startLoop(grpcC)

	first.stop(t)
	waitFor(t, 10*time.Second, "the raw clients to notice", func() bool { return sotw.connections() > 1 && delta.connections() > 1 })
	sotwConn, deltaConn := sotw.connections(), delta.connections()
	startServer(t, dir, addr, nil)
	if got := freshVersion(t, addr); got != freshBefore {
		t.Errorf("a fresh client gets version %s after the restart, %s before", got, freshBefore)
	}
	waitFor(t, 30*time.Second, "the delta client's first response after the restart", func() bool {
		return len(delta.eventsSince(deltaConn)) > 0
	})
	if evs := delta.eventsSince(deltaConn); evs[0].resources != 0 || evs[0].removed != 0 {
		t.Errorf("the delta client's responses after the restart: %+v, want the first with no resources", evs)
	}

	held := delta.heldVersions()
	writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", map[string]int{"a": 1}))
	waitFor(t, 30*time.Second, "the change to reach the reconnected clients", func() bool {
		return len(sotw.eventsSince(sotwConn)) > 0 && delta.heldVersions() != held
	})
	// Anything re-sent on reconnecting would have come before the change.
	if evs := sotw.eventsSince(sotwConn); evs[0].version == before {
		t.Errorf("the state-of-the-world client was sent %+v after the restart, holding %s", evs, before)
	}
	waitFor(t, 20*time.Second, "the gRPC client to route to a only", func() bool {
		id, err := call(context.Background(), grpcC)
		return err == nil && (id == "a1" || id == "a2")
	})
	if failed := loop.finish(); len(failed) > 0 {
		t.Errorf("%d RPCs failed across the restart, the first: %v", len(failed), failed[0])
	}
}

// freshVersion is the cluster version a new client is sent.
func freshVersion(t *testing.T, addr string) string {
	t.Helper()
	resp, err := sotwOnce(context.Background(), dialXDS(t, addr), envoyNode, resource.ClusterType, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetVersionInfo()
}
