package xdstls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
	"math/big"
	"net"
	"time"
)

// PKIOptions say what certificates NewPKI issues.
type PKIOptions struct {
	// DNSNames and IPs are the server certificate's subject alternative
	// names: every name and address clients dial the xDS server by.
	DNSNames []string
	IPs      []net.IP
	// ClientName is the client certificate's common name.
	ClientName string
	// ClientGroups are the consumer groups the client certificate may
	// join (see GroupURI); empty means every group.
	ClientGroups []string
	// Validity is how long the certificates are valid, from Now.
	Validity time.Duration
	Now      time.Time
}

// PKI is a CA and the server and client certificates it signed, PEM
// encoded.
type PKI struct {
	CACert, CAKey         []byte
	ServerCert, ServerKey []byte
	ClientCert, ClientKey []byte
}

// NewPKI issues a fresh CA (ECDSA P-256) and, signed by it, a server
// certificate for the given names and a client certificate. The CA key is
// returned so that more client certificates can be issued later; it never
// needs to reach a cluster.
func NewPKI(o PKIOptions) (*PKI, error) {
	if len(o.DNSNames) == 0 && len(o.IPs) == 0 {
		return nil, fmt.Errorf("the server certificate needs at least one DNS name or IP address")
	}
	if o.Validity <= 0 {
		return nil, fmt.Errorf("validity must be positive, not %v", o.Validity)
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	ca := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "switchyard xDS CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	root, err := issue(ca, nil, o)
	if err != nil {
		return nil, err
	}
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "switchyard xDS server"},
		DNSNames:    o.DNSNames,
		IPAddresses: o.IPs,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srv, err := issue(server, root, o)
	if err != nil {
		return nil, err
	}
	client := &x509.Certificate{
		Subject:     pkix.Name{CommonName: o.ClientName},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	groups := o.ClientGroups
	if len(groups) == 0 {
		groups = xdsres.Names()
	}
	for _, g := range groups {
		u, err := GroupURI(g)
		if err != nil {
			return nil, err
		}
		client.URIs = append(client.URIs, u)
	}
	cli, err := issue(client, root, o)
	if err != nil {
		return nil, err
	}
	return &PKI{
		CACert: root.certPEM, CAKey: root.keyPEM,
		ServerCert: srv.certPEM, ServerKey: srv.keyPEM,
		ClientCert: cli.certPEM, ClientKey: cli.keyPEM,
	}, nil
}

// issued is one certificate and its key.
type issued struct {
	cert            *x509.Certificate
	key             *ecdsa.PrivateKey
	certPEM, keyPEM []byte
}

// issue creates a key and a certificate from tmpl, signed by parent
// (self-signed when parent is nil).
func issue(tmpl *x509.Certificate, parent *issued, o PKIOptions) (*issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = o.Now.Add(-5 * time.Minute) // tolerate clock skew
	tmpl.NotAfter = o.Now.Add(o.Validity)
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, fmt.Errorf("issuing %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &issued{
		cert: cert, key: key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}),
	}, nil
}

// IssueClient signs one more client certificate with the PKI's CA, for a
// client that may join only the given groups (all when empty): say, a DNS
// balancer that must not be able to act as Envoy.
func (p *PKI) IssueClient(name string, groups []string, validity time.Duration, now time.Time) (certPEM, keyPEM []byte, err error) {
	ca, err := parseIssued(p.CACert, p.CAKey)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the CA: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(groups) == 0 {
		groups = xdsres.Names()
	}
	for _, g := range groups {
		u, err := GroupURI(g)
		if err != nil {
			return nil, nil, err
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
	if now.IsZero() {
		now = time.Now()
	}
	c, err := issue(tmpl, ca, PKIOptions{Validity: validity, Now: now})
	if err != nil {
		return nil, nil, err
	}
	return c.certPEM, c.keyPEM, nil
}

// parseIssued reads a PEM certificate and its PKCS#8 ECDSA key.
func parseIssued(certPEM, keyPEM []byte) (*issued, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the CA key is a %T, not ECDSA", k)
	}
	return &issued{cert: cert, key: key, certPEM: certPEM, keyPEM: keyPEM}, nil
}
