package xdstls

import (
	"context"
	"crypto/x509"
	"net/url"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// A node's group is what it says it is (node metadata, user agent), and
// the group decides what it receives: Envoy nodes get every TLS private
// key. Over mutual TLS the client certificate therefore bounds the groups
// a client may claim. A certificate lists them as URI subject alternative
// names, urn:switchyard:group:<group>; one that lists none may join any
// group but envoy, so a certificate issued by the same CA for another
// purpose cannot read the keys.

// groupURIPrefix starts the URI SANs that name a certificate's groups.
const groupURIPrefix = "urn:switchyard:group:"

// GroupURI is the URI SAN that lets a certificate join group g.
func GroupURI(g string) (*url.URL, error) {
	if _, err := xdsres.ParseGroup(g); err != nil {
		return nil, err
	}
	return url.Parse(groupURIPrefix + g)
}

// CertificateGroups lists the groups a certificate names.
func CertificateGroups(cert *x509.Certificate) []string {
	var out []string
	for _, u := range cert.URIs {
		if s := u.String(); strings.HasPrefix(s, groupURIPrefix) {
			out = append(out, strings.TrimPrefix(s, groupURIPrefix))
		}
	}
	return out
}

// AuthorizeGroup is an xdscache.GroupAuthorizer for a server that
// verifies client certificates: a node may claim group g only if the
// client's certificate allows it. Streams without a verified certificate
// (a plaintext server) are not restricted here; the server refuses to run
// plaintext off loopback.
func AuthorizeGroup(ctx context.Context, g xdsres.Group) error {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return nil
	}
	leaf := info.State.VerifiedChains[0][0]
	groups := CertificateGroups(leaf)
	switch {
	case len(groups) == 0 && g != xdsres.GroupEnvoy:
		return nil
	case slices.Contains(groups, string(g)):
		return nil
	}
	allowed := "every group but envoy"
	if len(groups) > 0 {
		allowed = strings.Join(groups, ", ")
	}
	return status.Errorf(codes.PermissionDenied,
		"this node claims the %s group, but its client certificate (%q) allows %s: issue it a certificate with 'switchyard certgen --client-groups %s'",
		g, leaf.Subject.CommonName, allowed, g)
}
