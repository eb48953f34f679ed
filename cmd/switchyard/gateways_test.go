package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

const gatewaysExample = "../../examples/etcd/gateways"

// TestGatewaysExampleRenders: each load balancer of examples/etcd/gateways
// renders valid, with its own hosts and none of the other's.
func TestGatewaysExampleRenders(t *testing.T) {
	hosts := map[string][]string{
		"edge-a": {"postgres.example.com", "redis.example.com"},
		"edge-b": {"mqtt.example.com", "amqp.example.com"},
	}
	for gw, own := range hosts {
		out, errOut, code := run(t, "render", "--source", gatewaysExample, "--ingress-class-name", gw)
		if code != 0 {
			t.Fatalf("render %s: exit %d\n%s", gw, code, errOut)
		}
		for other, theirs := range hosts {
			for _, h := range theirs {
				if got := strings.Contains(out, h); got != (other == gw) {
					t.Errorf("render %s: mentions %s: %v", gw, h, got)
				}
			}
		}
		if n := strings.Count(out, "currentStatus: valid"); n != len(own) {
			t.Errorf("render %s: %d valid proxies, want %d", gw, n, len(own))
		}
	}
}

// TestGatewaysExampleApplies follows examples/etcd/gateways/README.md:
// load the example into a real etcd, one transaction per file, serve it
// with --gateways edge-a,edge-b, and ask for listeners as an Envoy of each
// gateway: each gets its own hosts and none of the other's, and the
// status of both gateways' proxies is written back.
func TestGatewaysExampleApplies(t *testing.T) {
	e := etcdtest.Start(t)
	ep := "--etcd-endpoints=" + e.Endpoint
	out, errOut, code := run(t, "etcd", "apply", ep, "-f", gatewaysExample)
	if code != 0 || strings.Count(out, "objects written at revision") != 4 {
		t.Fatalf("etcd apply: exit %d\n%s%s", code, out, errOut)
	}

	admin, xds := "127.0.0.1:"+freePort(t), "127.0.0.1:"+freePort(t)
	serveUntilCleanup(t, "serve", ep, "--gateways", "edge-a,edge-b", "--xds-address", xds, "--admin-address", admin, "--etcd-lease-ttl", "2", "--log-level", "warn")
	testenv.WaitFor(t, 30*time.Second, "/readyz", func() bool {
		return strings.HasPrefix(httpGet(t, "http://"+admin+"/readyz"), "ok\netcd: connected")
	})
	cc, err := grpc.NewClient(xds, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	own := map[string][]string{"edge-a": {"postgres.example.com", "redis.example.com"}, "edge-b": {"mqtt.example.com", "amqp.example.com"}}
	for gw := range own {
		listeners := gatewayListeners(t, cc, gw)
		for other, theirs := range own {
			for _, h := range theirs {
				if got := strings.Contains(listeners, h); got != (other == gw) {
					t.Errorf("gateway %s: its listeners mention %s: %v", gw, h, got)
				}
			}
		}
	}
	for _, name := range []string{"postgres", "mqtt"} {
		testenv.WaitFor(t, 10*time.Second, "status of tcp/"+name, func() bool { return etcdStatus(t, e, "tcp", name) == "valid" })
	}
}

// gatewayListeners asks for listeners as an Envoy of gateway and returns
// their bytes as text, once the first response holds any.
func gatewayListeners(t *testing.T, cc *grpc.ClientConn, gateway string) string {
	t.Helper()
	node := &envoy_config_core_v3.Node{Id: "envoy-" + gateway, UserAgentName: "envoy", Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
		"switchyard.dev/gateway": structpb.NewStringValue(gateway),
	}}}
	var text string
	testenv.WaitFor(t, 10*time.Second, "listeners of gateway "+gateway, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
		if err != nil {
			return false
		}
		if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.ListenerType}); err != nil {
			return false
		}
		resp, err := st.Recv()
		if err != nil || len(resp.GetResources()) == 0 {
			return false
		}
		var b strings.Builder
		for _, r := range resp.GetResources() {
			b.Write(r.GetValue())
		}
		text = b.String()
		return strings.Contains(text, "example.com")
	})
	return text
}

// serveUntilCleanup runs the command (serve, with its flags) in the
// background until the test ends, and fails the test if it returns an
// error.
func serveUntilCleanup(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	root := newRootCommand()
	root.SetArgs(args)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", args[0], err)
		}
	})
}
