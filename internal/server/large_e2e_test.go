package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/testutil/logbuf"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// bigHostYAML is one host whose route configuration is about 6 MiB: 10,000
// routes, each with a long prefix and a header to set.
func bigHostYAML() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Service\nmetadata: {name: app, namespace: big}\nspec: {ports: [{port: 80}]}\n---\n")
	b.WriteString("apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: big, namespace: big}\nspec:\n  virtualhost: {fqdn: big.example.com}\n  routes:\n")
	pad := strings.Repeat("p", 250)
	for i := range 10000 {
		fmt.Fprintf(&b, "  - conditions: [{prefix: /r%05d-%s}]\n    requestHeadersPolicy: {set: [{name: x-route, value: %d-%s}]}\n    services: [{name: app, port: 80}]\n", i, pad, i, pad)
	}
	return b.String()
}

// TestResponsesOverFourMiB serves a route configuration larger than gRPC's
// default 4 MiB message limit. The server sends it whole: a client with the
// limit raised (as Envoy's own gRPC client has by default) receives it
// byte for byte; a client that keeps the default gets ResourceExhausted
// rather than a partial configuration, and the server says so in its log
// and in switchyard_xds_oversized_responses_total, for the envoy and the
// grpc group alike, so that the failure is never silent.
func TestResponsesOverFourMiB(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "big.yaml", bigHostYAML())
	logs := &logbuf.Buffer{}
	s := startServer(t, dir, "127.0.0.1:0", func(c *server.Config) {
		c.AdminAddress = "127.0.0.1:0"
		c.Log = slog.New(slog.NewTextHandler(logs, nil))
	})
	var name string
	var want []byte
	for _, r := range s.Cache().Resources(xdsres.GroupEnvoy, resource.RouteType) {
		if len(r.Any.GetValue()) > len(want) {
			name, want = r.Name, r.Any.GetValue()
		}
	}
	if len(want) <= xdscache.ClientMessageLimit {
		t.Fatalf("the largest route configuration is %d bytes, not over 4 MiB", len(want))
	}
	t.Logf("route configuration %s: %d bytes", name, len(want))

	raised := dialXDS(t, s.XDSAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	resp, err := sotwOnce(context.Background(), raised, envoyNode, resource.RouteType, 30*time.Second, name)
	if err != nil {
		t.Fatalf("a client with a raised limit: %v", err)
	}
	if len(resp.GetResources()) != 1 || !bytes.Equal(resp.GetResources()[0].GetValue(), want) {
		t.Fatalf("a client with a raised limit got %d resources, not the route configuration intact", len(resp.GetResources()))
	}

	def := dialXDS(t, s.XDSAddr().String())
	if _, err := sotwOnce(context.Background(), def, envoyNode, resource.RouteType, 30*time.Second, name); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a client with the default limit: %v, want ResourceExhausted", err)
	}
	grpcNode := nodeWithGroup("grpc-big", "grpc", "")
	if _, err := sotwOnce(context.Background(), def, grpcNode, resource.RouteType, 30*time.Second, "grpc/big.example.com"); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a gRPC client with the default limit: %v, want ResourceExhausted", err)
	}
	for _, g := range []string{"envoy", "grpc"} {
		line := metric(t, s.Server, fmt.Sprintf(`switchyard_xds_oversized_responses_total{group=%q,type="envoy.config.route.v3.RouteConfiguration"}`, g))
		if line == "" || strings.HasSuffix(line, " 0") {
			t.Errorf("group %s: oversized responses not counted: %q", g, line)
		}
	}
	if !strings.Contains(logs.String(), "larger than gRPC's default 4 MiB receive limit") {
		t.Error("the oversized response was not logged")
	}
}
