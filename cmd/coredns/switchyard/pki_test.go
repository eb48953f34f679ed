package switchyard

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

// testPKI is Switchyard's own PKI (a CA, a server certificate for
// "xds.test" and a client certificate), for mTLS between the plugin and
// the control plane.
type testPKI struct {
	*xdstls.PKI
	serverCert tls.Certificate
	pool       *x509.CertPool
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	pki, err := xdstls.NewPKI(xdstls.PKIOptions{DNSNames: []string{"xds.test"}, ClientName: "coredns", Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{PKI: pki, pool: x509.NewCertPool()}
	if p.serverCert, err = tls.X509KeyPair(pki.ServerCert, pki.ServerKey); err != nil {
		t.Fatal(err)
	}
	if !p.pool.AppendCertsFromPEM(pki.CACert) {
		t.Fatal("the CA is not PEM")
	}
	return p
}

// write stores the CA and the client certificate and key.
func (p *testPKI) write(t testing.TB, ca, cert, key string) {
	t.Helper()
	for path, b := range map[string][]byte{ca: p.CACert, cert: p.ClientCert, key: p.ClientKey} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// serverTLS requires a client certificate signed by the CA.
func (p *testPKI) serverTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.pool,
		MinVersion:   tls.VersionTLS12,
	}
}
