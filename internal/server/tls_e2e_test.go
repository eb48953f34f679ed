package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/xds"

	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

// writeTestPKI issues a CA, server and client certificate for 127.0.0.1
// and writes them as certgen does.
func writeTestPKI(t *testing.T) string {
	t.Helper()
	p, err := xdstls.NewPKI(xdstls.PKIOptions{DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, ClientName: "e2e", Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"ca.crt": p.CACert, "server.crt": p.ServerCert, "server.key": p.ServerKey, "client.crt": p.ClientCert, "client.key": p.ClientKey} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func pkiFiles(dir, who string) xdstls.Files {
	return xdstls.Files{Cert: filepath.Join(dir, who+".crt"), Key: filepath.Join(dir, who+".key"), CA: filepath.Join(dir, "ca.crt")}
}

// tlsControlPlane serves the weighted setup with mutual TLS.
func tlsControlPlane(t *testing.T, pki string) (*running, []string) {
	t.Helper()
	dir, _, ids := weightedSetup(t)
	creds, err := xdstls.ServerCredentials(pkiFiles(pki, "server"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, dir, "127.0.0.1:0", func(c *server.Config) {
		c.GRPCOptions = append(c.GRPCOptions, grpc.Creds(creds))
	}), ids
}

// TestMutualTLSRejectsClientsWithoutCertificate: with TLS on, a client in
// clear text, one with TLS but no certificate, and one with a certificate
// from another CA get nothing.
func TestMutualTLSRejectsClientsWithoutCertificate(t *testing.T) {
	pki := writeTestPKI(t)
	s, _ := tlsControlPlane(t, pki)
	addr := s.XDSAddr().String()
	ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	other := writeTestPKI(t)
	otherClient, err := tls.LoadX509KeyPair(filepath.Join(other, "client.crt"), filepath.Join(other, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	for name, creds := range map[string]credentials.TransportCredentials{
		"clear text":                  insecure.NewCredentials(),
		"TLS without a certificate":   credentials.NewTLS(&tls.Config{RootCAs: roots}),
		"a certificate of another CA": credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{otherClient}}),
	} {
		cc := dialXDS(t, addr, grpc.WithTransportCredentials(creds))
		resp, err := sotwOnce(context.Background(), cc, envoyNode, resource.ClusterType, 5*time.Second)
		if err == nil {
			t.Errorf("%s: got %d clusters", name, len(resp.GetResources()))
		}
	}
}

// TestMutualTLSServesClientsWithCertificate: a client with a certificate
// from the CA receives the resources, over a raw ADS stream and through
// gRPC's own xDS client, whose bootstrap names the same three files.
func TestMutualTLSServesClientsWithCertificate(t *testing.T) {
	pki := writeTestPKI(t)
	s, ids := tlsControlPlane(t, pki)
	cfg, err := xdstls.ClientConfig(pkiFiles(pki, "client"), "")
	if err != nil {
		t.Fatal(err)
	}
	cc := dialXDS(t, s.XDSAddr().String(), grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	resp, err := sotwOnce(context.Background(), cc, envoyNode, resource.ClusterType, 5*time.Second)
	if err != nil || len(resp.GetResources()) == 0 {
		t.Fatalf("a client with a certificate from the CA: %v, %d clusters", err, len(resp.GetResources()))
	}

	bootstrap := fmt.Sprintf(`{
  "xds_servers": [{"server_uri": "passthrough:///%s", "channel_creds": [{"type": "tls", "config": {
    "certificate_file": %q, "private_key_file": %q, "ca_certificate_file": %q}}],
    "server_features": ["ignore_resource_deletion"]}],
  "node": {"id": "e2e-tls", "locality": {"zone": "z1"}}
}`, s.XDSAddr(), filepath.Join(pki, "client.crt"), filepath.Join(pki, "client.key"), filepath.Join(pki, "ca.crt"))
	rb, err := xds.NewXDSResolverWithConfigForTesting([]byte(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	gc, err := grpc.NewClient("xds:///app.example.com", grpc.WithResolvers(rb), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gc.Close() })
	warmUp(t, testgrpc.NewTestServiceClient(gc), ids...)
}
