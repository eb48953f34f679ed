// Package grpcpeer is the data plane of end-to-end tests: real gRPC
// backends that answer with their id, and gRPC's own xDS client
// (google.golang.org/grpc/xds) bootstrapped to a control plane, so that a
// test asserts what a proxyless client actually does with what it is
// served.
package grpcpeer

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/xds"
)

// Backend is a gRPC server on a loopback port answering UnaryCall with
// its id.
type Backend struct {
	ID   string
	Port int
	testgrpc.UnimplementedTestServiceServer
}

// UnaryCall answers with the backend's id.
func (b *Backend) UnaryCall(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{ServerId: b.ID}, nil
}

// StartBackend serves until the test ends.
func StartBackend(t testing.TB, id string) *Backend {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &Backend{ID: id, Port: l.Addr().(*net.TCPAddr).Port}
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, b)
	go func() { _ = gs.Serve(l) }()
	t.Cleanup(gs.Stop)
	return b
}

// Client dials xds:///target through gRPC's xDS resolver, bootstrapped to
// the xDS server at xdsAddr with node id nodeID. It does not ignore
// resource deletion: a deleted listener makes RPCs fail, as it should.
func Client(t testing.TB, xdsAddr net.Addr, nodeID, target string) testgrpc.TestServiceClient {
	t.Helper()
	return Dial(t, xdsAddr, target, Node{ID: nodeID})
}

// Node is what a Dial client's bootstrap says of its node.
type Node struct {
	ID string
	// Zone is the node's locality zone, which locality-aware routing
	// reads; "" sets none.
	Zone string
	// Metadata are string fields of the node metadata, such as the
	// gateway it belongs to (switchyard.dev/gateway).
	Metadata map[string]string
	// IgnoreResourceDeletion sets the server feature of that name: the
	// client keeps a deleted resource's last version.
	IgnoreResourceDeletion bool
}

// Dial is Client with the node described in full and further dial
// options (credentials, a dialer, ...), which come after its own.
func Dial(t testing.TB, xdsAddr net.Addr, target string, n Node, opts ...grpc.DialOption) testgrpc.TestServiceClient {
	t.Helper()
	node := map[string]any{"id": n.ID}
	if n.Zone != "" {
		node["locality"] = map[string]string{"zone": n.Zone}
	}
	if len(n.Metadata) > 0 {
		node["metadata"] = n.Metadata
	}
	server := map[string]any{"server_uri": "passthrough:///" + xdsAddr.String(), "channel_creds": []map[string]string{{"type": "insecure"}}}
	if n.IgnoreResourceDeletion {
		server["server_features"] = []string{"ignore_resource_deletion"}
	}
	bootstrap, err := json.Marshal(map[string]any{"xds_servers": []any{server}, "node": node})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := xds.NewXDSResolverWithConfigForTesting(bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]grpc.DialOption{grpc.WithResolvers(rb), grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	cc, err := grpc.NewClient("xds:///"+target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return testgrpc.NewTestServiceClient(cc)
}

// Answer makes one RPC and returns the id of the backend that answered,
// or "error: " and the error.
func Answer(c testgrpc.TestServiceClient) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := c.UnaryCall(ctx, &testgrpc.SimpleRequest{})
	if err != nil {
		return "error: " + err.Error()
	}
	return resp.GetServerId()
}
