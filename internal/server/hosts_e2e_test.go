package server_test

import (
	"context"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
)

// TestGRPCWildcardHost dials names a wildcard host serves through gRPC's
// own xDS client: xds:///api.example.com (and with :443, how a TLS host
// is dialled) reaches the *.example.com routes, while an exact host under
// the same domain keeps its own.
func TestGRPCWildcardHost(t *testing.T) {
	dir := t.TempDir()
	wild, exact := grpcpeer.StartBackend(t, "wild"), grpcpeer.StartBackend(t, "exact")
	writeFile(t, dir, "wild.yaml", serviceYAML("shop", "wild", endpoint{wild, "z1"}))
	writeFile(t, dir, "exact.yaml", serviceYAML("shop", "exact", endpoint{exact, "z1"}))
	writeFile(t, dir, "proxy.yaml", `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: wildcard, namespace: shop}
spec:
  virtualhost: {fqdn: "*.example.com"}
  routes:
  - services: [{name: wild, port: 80}]
---
apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: exact, namespace: shop}
spec:
  virtualhost: {fqdn: exact.example.com}
  routes:
  - services: [{name: exact, port: 80}]
`)
	s := controlPlane(t, dir)
	for target, want := range map[string]string{
		"api.example.com":    "wild",
		"api.example.com:80": "wild",
		"exact.example.com":  "exact",
	} {
		c := grpcClient(t, s, target)
		warmUp(t, c, want)
		counts, failed := tally(context.Background(), c, 50)
		if failed > 0 || counts[want] != 50 {
			t.Errorf("%s: %v (%d failed), want every RPC answered by %s", target, counts, failed, want)
		}
	}
	noNACKs(t, s)
}

// TestGRPCMethodCondition routes by :method, as Contour's guides do. Every
// RPC is a POST, so gRPC clients take the POST route; without the grpc
// group deciding the condition they would match neither route, since
// pseudo-headers are not in an RPC's metadata.
func TestGRPCMethodCondition(t *testing.T) {
	dir := t.TempDir()
	reader, writer := grpcpeer.StartBackend(t, "reader"), grpcpeer.StartBackend(t, "writer")
	writeFile(t, dir, "reader.yaml", serviceYAML("shop", "reader", endpoint{reader, "z1"}))
	writeFile(t, dir, "writer.yaml", serviceYAML("shop", "writer", endpoint{writer, "z1"}))
	writeFile(t, dir, "proxy.yaml", `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: app, namespace: shop}
spec:
  virtualhost: {fqdn: app.example.com}
  routes:
  - conditions: [{header: {name: ":method", exact: GET}}]
    services: [{name: reader, port: 80}]
  - conditions: [{header: {name: ":method", exact: POST}}]
    services: [{name: writer, port: 80}]
`)
	s := controlPlane(t, dir)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, "writer")
	counts, failed := tally(context.Background(), c, 100)
	if failed > 0 || counts["writer"] != 100 {
		t.Fatalf("%v (%d failed), want every RPC answered by writer", counts, failed)
	}
	noNACKs(t, s)
}
