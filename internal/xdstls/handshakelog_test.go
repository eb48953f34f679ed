package xdstls

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/testutil/logbuf"
)

// TestHandshakeFailuresAreLogged: a client without a certificate is
// turned away by the server credentials, and the log says so once, however
// often it retries; a client with one is let in without a line.
func TestHandshakeFailuresAreLogged(t *testing.T) {
	dir, p := writePKI(t)
	logs := &logbuf.Buffer{}
	creds, err := ServerCredentials(files(dir, "server"), slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	handshake := func(cfg *tls.Config) error {
		done := make(chan error, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				done <- err
				return
			}
			defer c.Close()
			_, _, err = creds.ServerHandshake(c)
			done <- err
		}()
		c, err := tls.Dial("tcp", l.Addr().String(), cfg)
		if err == nil {
			// TLS 1.3 reports a refused client certificate on the first read.
			_, _ = c.Read(make([]byte, 1))
			_ = c.Close()
		}
		return <-done
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.CACert)
	// gRPC's credentials require the h2 ALPN protocol.
	noCert := &tls.Config{RootCAs: roots, ServerName: "localhost", NextProtos: []string{"h2"}}
	for range 3 {
		if err := handshake(noCert); err == nil {
			t.Fatal("a client without a certificate completed the handshake")
		}
	}
	if n := strings.Count(logs.String(), "xDS client TLS handshake failed"); n != 1 {
		t.Errorf("%d log lines for 3 failed handshakes of one client, want 1:\n%s", n, logs.String())
	}
	good, err := ClientConfig(files(dir, "client"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	good.NextProtos = []string{"h2"}
	logs.Reset()
	if err := handshake(good); err != nil {
		t.Fatalf("a client with a certificate: %v", err)
	}
	if strings.Contains(logs.String(), "handshake failed") {
		t.Errorf("a good handshake was logged as failed:\n%s", logs.String())
	}
}
