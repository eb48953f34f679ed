package server_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/types/known/structpb"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

// gatewaysSetup serves one host name, app.example.com, from three
// gateways at once, each with its own Service and certificate:
//
//	gateway     ingressClassName  Service  Secret
//	(default)   -                 shop/c   shop/tls-default
//	a           a                 shop/a   shop/tls-a
//	b           b                 shop/b   shop/tls-b
//
// The same name in every slice is the point: a node that saw another
// gateway's listeners or routes would route to the wrong backend.
func gatewaysSetup(t *testing.T) *running {
	t.Helper()
	p, err := xdstls.NewPKI(xdstls.PKIOptions{DNSNames: []string{"app.example.com"}, ClientName: "x", Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	indent := func(b []byte) string { return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n    ") }
	dir := t.TempDir()
	for _, g := range []struct{ gateway, class, svc string }{{"default", "", "c"}, {"a", "a", "a"}, {"b", "b", "b"}} {
		class := ""
		if g.class != "" {
			class = "  ingressClassName: " + g.class + "\n"
		}
		writeFile(t, dir, g.gateway+"-svc.yaml", serviceYAML("shop", g.svc, endpoint{grpcpeer.StartBackend(t, g.svc), "z1"}))
		writeFile(t, dir, g.gateway+".yaml", fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: tls-%s, namespace: shop}
type: kubernetes.io/tls
stringData:
  tls.crt: |
    %s
  tls.key: |
    %s
---
apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: app-%s, namespace: shop}
spec:
%s  virtualhost: {fqdn: app.example.com, tls: {secretName: tls-%s}}
  routes: [{services: [{name: %s, port: 80}]}]
`, g.gateway, indent(p.ServerCert), indent(p.ServerKey), g.gateway, class, g.gateway, g.svc))
	}
	return startServer(t, dir, "127.0.0.1:0", func(c *server.Config) {
		c.AdminAddress = "127.0.0.1:0"
		c.Pipeline.Gateways = []string{"a", "b"}
	})
}

// grpcGatewayClient dials target through gRPC's own xDS resolver, as a
// node of gateway ("" for the default one) in zone z1.
func grpcGatewayClient(t *testing.T, xdsAddr net.Addr, gateway, target string, opts ...grpc.DialOption) testgrpc.TestServiceClient {
	t.Helper()
	n := grpcpeer.Node{ID: "e2e-" + t.Name(), Zone: "z1", IgnoreResourceDeletion: true}
	if gateway != "" {
		n.ID += "-" + gateway
		n.Metadata = map[string]string{xdscache.GatewayMetadataKey: gateway}
	}
	return grpcpeer.Dial(t, xdsAddr, target, n, opts...)
}

// TestGRPCGatewaySeesOnlyItsRoutes: gRPC's xDS client, as a node of each
// gateway, dials the one host name all three serve; every RPC must reach
// that gateway's own Service, never another's.
func TestGRPCGatewaySeesOnlyItsRoutes(t *testing.T) {
	s := gatewaysSetup(t)
	for gateway, want := range map[string]string{"": "c", "a": "a", "b": "b"} {
		c := grpcGatewayClient(t, s.XDSAddr(), gateway, "app.example.com")
		warmUp(t, c, want)
		counts, failed := tally(context.Background(), c, 200)
		if failed > 0 || counts[want] != 200 {
			t.Errorf("gateway %q: %d RPCs failed, backends %v; want all 200 on %s", gateway, failed, counts, want)
		}
	}
	noNACKs(t, s.Server)
}

// gatewayNode is an Envoy node of gateway ("" names none).
func gatewayNode(gateway string) *envoy_config_core_v3.Node {
	n := nodeWithGroup("envoy-"+gateway, string(xdsres.GroupEnvoy), "envoy")
	if gateway != "" {
		n.Metadata.Fields[xdscache.GatewayMetadataKey] = structpb.NewStringValue(gateway)
	}
	return n
}

// TestADSGatewayIsolation: an Envoy node of gateway a receives gateway a's
// listeners, clusters and secrets, and none of gateway b's or the default
// gateway's, over a real ADS stream.
func TestADSGatewayIsolation(t *testing.T) {
	s := gatewaysSetup(t)
	ctx := context.Background()
	cc := dialXDS(t, s.XDSAddr().String())
	waitFor(t, 30*time.Second, "every gateway's clusters", func() bool {
		for _, gw := range []string{"", "a", "b"} {
			if len(s.Cache().Gateway(gw).Resources(xdsres.GroupEnvoy, resource.ClusterType)) == 0 {
				return false
			}
		}
		return true
	})

	clusters, err := sotwOnce(ctx, cc, gatewayNode("a"), resource.ClusterType, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range clusters.GetResources() {
		if !strings.Contains(string(r.GetValue()), "shop/a") {
			t.Errorf("gateway a received a cluster that is not of shop/a: %q", r.GetValue())
		}
	}
	if len(clusters.GetResources()) == 0 {
		t.Fatal("gateway a received no clusters")
	}

	listeners, err := sotwOnce(ctx, cc, gatewayNode("a"), resource.ListenerType, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range listeners.GetResources() {
		for _, foreign := range []string{"tls-b", "tls-default", "shop/b", "shop/c"} {
			if strings.Contains(string(r.GetValue()), foreign) {
				t.Errorf("a listener of gateway a mentions %s", foreign)
			}
		}
	}

	// Asked for every gateway's certificate by name, gateway a's node gets
	// its own and no other.
	secrets, err := sotwOnce(ctx, cc, gatewayNode("a"), resource.SecretType, 5*time.Second, "shop/tls-a", "shop/tls-b", "shop/tls-default")
	if err != nil {
		t.Fatal(err)
	}
	if names := secretNames(t, secrets.GetResources()); fmt.Sprint(names) != "[shop/tls-a]" {
		t.Errorf("gateway a received secrets %v, want [shop/tls-a]", names)
	}
	for _, r := range s.Cache().Gateway("b").Resources(xdsres.GroupEnvoy, resource.SecretType) {
		if r.Name == "shop/tls-a" {
			t.Errorf("gateway b's cache holds gateway a's secret")
		}
	}
}

// TestUnknownGatewayIsRefused: a node naming a gateway that is not served
// gets an error, not the default gateway's configuration.
func TestUnknownGatewayIsRefused(t *testing.T) {
	s := gatewaysSetup(t)
	resp, err := sotwOnce(context.Background(), dialXDS(t, s.XDSAddr().String()), gatewayNode("typo"), resource.ClusterType, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), `gateway "typo"`) {
		t.Fatalf("a node of an unknown gateway got %d clusters, error %v", len(resp.GetResources()), err)
	}
}

// TestProgrammedCountsOnlyTheGatewaysNodes: a proxy is programmed by the
// nodes of its own gateway. A node of gateway a that acknowledges its
// clusters programs gateway a's proxy and is not waited for by the
// others' (it never receives their configuration, though it holds
// resources of the same names); a default node then programs the
// default gateway's proxy.
func TestProgrammedCountsOnlyTheGatewaysNodes(t *testing.T) {
	s := gatewaysSetup(t)
	ackClusters := func(node *envoy_config_core_v3.Node) {
		t.Helper()
		st, rx := sotwADS(t, s.Server)
		if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.ClusterType}); err != nil {
			t.Fatal(err)
		}
		resp, ok, err := rx.next(10 * time.Second)
		if err != nil || !ok || len(resp.GetResources()) == 0 {
			t.Fatalf("gateway %q: no clusters (%v)", xdscache.GatewayOf(node), err)
		}
		if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.ClusterType, ResponseNonce: resp.GetNonce(), VersionInfo: resp.GetVersionInfo()}); err != nil {
			t.Fatal(err)
		}
	}
	ackClusters(gatewayNode("a"))
	// Gateway a's own proxy is programmed by its node: the evaluation has
	// seen that node.
	waitFor(t, 10*time.Second, "shop/app-a to be programmed", func() bool {
		return programmedOf(t, s.Server, "shop", "app-a").Reason == xdsres.ReasonProgrammed
	})
	if got := programmedOf(t, s.Server, "shop", "app-b"); got.Reason != xdsres.ReasonNoNodes {
		t.Errorf("gateway b's proxy, with no node of b connected, is %+v, want %s", got, xdsres.ReasonNoNodes)
	}
	if got := programmedOf(t, s.Server, "shop", "app-default"); got.Reason != xdsres.ReasonNoNodes {
		t.Fatalf("with only a node of gateway a connected, the default gateway's proxy is %+v, want %s", got, xdsres.ReasonNoNodes)
	}
	ackClusters(gatewayNode(""))
	waitFor(t, 10*time.Second, "shop/app-default to be programmed", func() bool {
		return programmedOf(t, s.Server, "shop", "app-default").Reason == xdsres.ReasonProgrammed
	})
}
