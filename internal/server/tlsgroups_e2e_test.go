package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

// TestClientCertificateBoundsGroups: over mutual TLS, the client
// certificate decides which groups a node may claim, so that only clients
// trusted as Envoy receive TLS private keys.
func TestClientCertificateBoundsGroups(t *testing.T) {
	pki, err := xdstls.NewPKI(xdstls.PKIOptions{DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, ClientName: "envoy", Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dnsCert, dnsKey, err := pki.IssueClient("coredns", []string{"dns"}, time.Hour, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := tls.X509KeyPair(pki.ServerCert, pki.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pki.CACert)
	serverCreds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: roots, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	dir, _, _ := weightedSetup(t)
	s := startServer(t, dir, "127.0.0.1:0", func(c *server.Config) {
		c.GRPCOptions = append(c.GRPCOptions, grpc.Creds(serverCreds))
		c.XDSOptions = append(c.XDSOptions, xdscache.WithGroupAuthorizer(xdstls.AuthorizeGroup))
	})
	dial := func(certPEM, keyPEM []byte) *grpc.ClientConn {
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return dialXDS(t, s.XDSAddr().String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{c}})))
	}
	envoyConn, dnsConn := dial(pki.ClientCert, pki.ClientKey), dial(dnsCert, dnsKey)
	ctx := context.Background()

	if resp, err := sotwOnce(ctx, envoyConn, nodeWithGroup("n-envoy", "envoy", ""), resource.ClusterType, 5*time.Second); err != nil || len(resp.GetResources()) == 0 {
		t.Fatalf("a certificate allowing every group may act as Envoy: %v", err)
	}
	if resp, err := sotwOnce(ctx, dnsConn, nodeWithGroup("n-dns", "dns", ""), resource.ClusterType, 5*time.Second); err != nil || len(resp.GetResources()) == 0 {
		t.Fatalf("a dns certificate may act as a DNS balancer: %v", err)
	}
	_, err = sotwOnce(ctx, dnsConn, nodeWithGroup("n-envoy", "envoy", ""), resource.SecretType, 5*time.Second, "infra/shop-example-tls")
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a dns certificate claiming the envoy group: %v, want PermissionDenied", err)
	}

	// A node switched in the middle of a stream is checked too.
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(dnsConn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: nodeWithGroup("n-dns", "dns", ""), TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: nodeWithGroup("n-envoy", "envoy", ""), TypeUrl: resource.ClusterType, ResponseNonce: first.GetNonce(), VersionInfo: first.GetVersionInfo()})
	for {
		if _, err := st.Recv(); err != nil {
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("switching to the envoy group mid-stream: %v, want PermissionDenied", err)
			}
			break
		}
	}
}
