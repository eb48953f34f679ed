package xdstls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func peerWith(cert *x509.Certificate) context.Context {
	info := credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}}
	return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: info})
}

func TestAuthorizeGroup(t *testing.T) {
	dnsOnly, _ := GroupURI("dns")
	cases := []struct {
		name  string
		ctx   context.Context
		group xdsres.Group
		ok    bool
	}{
		{"plaintext is not restricted here", context.Background(), xdsres.GroupEnvoy, true},
		{"no group in the certificate: not envoy", peerWith(&x509.Certificate{}), xdsres.GroupEnvoy, false},
		{"no group in the certificate: dns", peerWith(&x509.Certificate{}), xdsres.GroupDNS, true},
		{"dns certificate as dns", peerWith(&x509.Certificate{URIs: []*url.URL{dnsOnly}}), xdsres.GroupDNS, true},
		{"dns certificate as grpc", peerWith(&x509.Certificate{URIs: []*url.URL{dnsOnly}}), xdsres.GroupGRPC, false},
	}
	for _, tc := range cases {
		err := AuthorizeGroup(tc.ctx, tc.group)
		if (err == nil) != tc.ok || (err != nil && status.Code(err) != codes.PermissionDenied) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := GroupURI("admin"); err == nil {
		t.Error("GroupURI must refuse a group that does not exist")
	}
}
