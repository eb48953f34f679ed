package server_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/xds"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// startXDSBackend runs a real xDS-enabled gRPC server (gRFC A36) on
// loopback that takes its server listener, and with it the RBAC policy it
// enforces, from the control plane at xdsAddr: the one Switchyard serves
// for the backends of fqdn listening on 127.0.0.1. It returns once the
// server is SERVING.
func startXDSBackend(t *testing.T, xdsAddr net.Addr, fqdn, id string) *grpcpeer.Backend {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := fmt.Sprintf(`{
  "xds_servers": [{"server_uri": "passthrough:///%s", "channel_creds": [{"type": "insecure"}], "server_features": ["ignore_resource_deletion"]}],
  "node": {"id": "e2e-server-%s"},
  "server_listener_resource_name_template": %q
}`, xdsAddr, t.Name(), translator.GRPCServerListenerName(fqdn, "127.0.0.1"))
	serving := make(chan struct{})
	var once bool
	gs, err := xds.NewGRPCServer(
		grpc.Creds(insecure.NewCredentials()),
		xds.BootstrapContentsForTesting([]byte(bootstrap)),
		xds.ServingModeCallback(func(_ net.Addr, args xds.ServingModeChangeArgs) {
			if args.Mode == connectivity.ServingModeServing && !once {
				once = true
				close(serving)
			}
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	b := &grpcpeer.Backend{ID: id, Port: l.Addr().(*net.TCPAddr).Port}
	testgrpc.RegisterTestServiceServer(gs, b)
	go func() { _ = gs.Serve(l) }()
	t.Cleanup(gs.Stop)
	select {
	case <-serving:
	case <-time.After(20 * time.Second):
		t.Fatalf("the xDS server never started serving: no usable listener %s", translator.GRPCServerListenerName(fqdn, "127.0.0.1"))
	}
	return b
}

// fromAddress dials every backend from a given loopback source address,
// so that one test process can be two clients an IP filter tells apart.
func fromAddress(ip string) grpc.DialOption {
	return grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return d.DialContext(ctx, "tcp", addr)
	})
}

func ipFilterProxy(hostPolicy, routePolicy string) string {
	return fmt.Sprintf(`apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: app, namespace: shop}
spec:
  virtualhost:
    fqdn: app.example.com
    %s
  routes:
  - conditions: [{prefix: /grpc.testing.TestService}]
    services: [{name: a, port: 80}]
    %s
`, hostPolicy, routePolicy)
}

// waitForCode calls until an RPC ends with the wanted code (OK for an
// answer).
func waitForCode(t *testing.T, c testgrpc.TestServiceClient, want codes.Code, what string) {
	t.Helper()
	var last error
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, last = call(context.Background(), c)
		if status.Code(last) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the last RPC ended with %v, want %v", what, last, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGRPCIPFilter serves an HTTPProxy's IP allow and deny lists to a
// proxyless gRPC client and an xDS-enabled gRPC backend: the backend
// enforces them with gRPC's RBAC filter. The client from 127.0.0.1 is
// allowed throughout and never sees a failed RPC, while the policy
// switches from the host's allow list (127.0.0.2 denied) to a host deny
// list of another address (127.0.0.2 let in) to a route's deny list that
// replaces the host's (127.0.0.2 denied again).
func TestGRPCIPFilter(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "proxy.yaml", ipFilterProxy("ipAllowPolicy: [{source: Peer, cidr: 127.0.0.1/32}]", ""))
	s := controlPlane(t, dir)
	b := startXDSBackend(t, s.XDSAddr(), "app.example.com", "a1")
	writeFile(t, dir, "a.yaml", serviceYAML("shop", "a", endpoint{b, "z1"}))

	allowed := grpcClient(t, s, "app.example.com")
	other := grpcClientAt(t, s.XDSAddr(), "app.example.com", fromAddress("127.0.0.2"))
	warmUp(t, allowed, "a1")
	waitForCode(t, other, codes.PermissionDenied, "127.0.0.2 under an allow list of 127.0.0.1")

	loop := startLoop(allowed)
	writeFile(t, dir, "proxy.yaml", ipFilterProxy("ipDenyPolicy: [{source: Peer, cidr: 127.0.0.3}]", ""))
	waitForCode(t, other, codes.OK, "127.0.0.2 under a deny list of 127.0.0.3")

	writeFile(t, dir, "proxy.yaml", ipFilterProxy("ipDenyPolicy: [{source: Peer, cidr: 127.0.0.3}]", "ipDenyPolicy: [{source: Remote, cidr: 127.0.0.2/31}]"))
	waitForCode(t, other, codes.PermissionDenied, "127.0.0.2 under a route deny list of 127.0.0.2/31")
	if errs := loop.finish(); len(errs) > 0 {
		t.Fatalf("%d RPCs of the allowed client failed while the policy changed (first: %v)", len(errs), errs[0])
	}
	if id, err := call(context.Background(), allowed); err != nil || id != "a1" {
		t.Fatalf("allowed client after the changes: %q, %v", id, err)
	}
	noNACKs(t, s)
}
