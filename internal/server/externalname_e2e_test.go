package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/server"
)

// TestGRPCExternalName dials a route to an ExternalName Service through
// gRPC's own xDS client: the grpc group serves it as a LOGICAL_DNS cluster,
// which gRPC resolves itself ("localhost" here, where the backend
// listens), and a route splitting between it and a Service with endpoints
// reaches both. Nothing is NACKed.
func TestGRPCExternalName(t *testing.T) {
	dir := t.TempDir()
	outside, inside := grpcpeer.StartBackend(t, "outside"), grpcpeer.StartBackend(t, "inside")
	writeFile(t, dir, "inside.yaml", serviceYAML("shop", "inside", endpoint{inside, "z1"}))
	writeFile(t, dir, "outside.yaml", fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: outside, namespace: shop}
spec:
  type: ExternalName
  externalName: localhost
  ports: [{port: %d}]
`, outside.Port))
	writeFile(t, dir, "proxy.yaml", fmt.Sprintf(`apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: hosted, namespace: shop}
spec:
  virtualhost: {fqdn: hosted.example.com}
  routes:
  - services: [{name: outside, port: %[1]d}]
---
apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: split, namespace: shop}
spec:
  virtualhost: {fqdn: split.example.com}
  routes:
  - services:
    - {name: inside, port: 80, weight: 50}
    - {name: outside, port: %[1]d, weight: 50}
`, outside.Port))
	s := startServer(t, dir, "127.0.0.1:0", func(c *server.Config) {
		c.AdminAddress = "127.0.0.1:0"
		c.Pipeline.DAG.ExternalNameServices = true
	}).Server

	c := grpcClient(t, s, "hosted.example.com")
	warmUp(t, c, "outside")
	counts, failed := tally(context.Background(), c, 50)
	if failed > 0 || counts["outside"] != 50 {
		t.Errorf("hosted.example.com: %v (%d failed), want every RPC answered by outside", counts, failed)
	}

	c = grpcClient(t, s, "split.example.com")
	warmUp(t, c, "inside", "outside")
	counts, failed = tally(context.Background(), c, 200)
	if failed > 0 || counts["inside"] == 0 || counts["outside"] == 0 || counts["inside"]+counts["outside"] != 200 {
		t.Errorf("split.example.com: %v (%d failed), want both backends and no failure", counts, failed)
	}
	noNACKs(t, s)
}
