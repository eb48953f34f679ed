package xdstls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/testutil/logbuf"
)

// writePKI issues a PKI for 127.0.0.1 and localhost and writes it to a
// directory the way certgen does.
func writePKI(t *testing.T) (dir string, p *PKI) {
	t.Helper()
	p, err := NewPKI(PKIOptions{DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, ClientName: "test-client", Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	for name, b := range map[string][]byte{"ca.crt": p.CACert, "ca.key": p.CAKey, "server.crt": p.ServerCert, "server.key": p.ServerKey, "client.crt": p.ClientCert, "client.key": p.ClientKey} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, p
}

func files(dir, who string) Files {
	return Files{Cert: filepath.Join(dir, who+".crt"), Key: filepath.Join(dir, who+".key"), CA: filepath.Join(dir, "ca.crt")}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// serve accepts TLS connections with the server config on the loopback
// address it returns, and writes "ok" on each whose handshake succeeds.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if c.(*tls.Conn).Handshake() == nil {
				_, _ = c.Write([]byte("ok"))
			}
			_ = c.Close()
		}
	}()
	return l.Addr().String()
}

// dial connects and reads the server's "ok"; any failure is returned.
func dial(addr string, cfg *tls.Config) error {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 2)
	_, err = io.ReadFull(c, buf)
	return err
}

func TestMutualTLS(t *testing.T) {
	dir, p := writePKI(t)
	srv, err := ServerConfig(files(dir, "server"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, srv)
	good, err := ClientConfig(files(dir, "client"), "")
	if err != nil {
		t.Fatal(err)
	}
	good.ServerName = "127.0.0.1"
	if err := dial(addr, good); err != nil {
		t.Fatalf("a client with a certificate from the CA: %v", err)
	}

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.CACert)
	noCert := &tls.Config{RootCAs: roots, ServerName: "localhost"}
	if err := dial(addr, noCert); err == nil {
		t.Error("a client without a certificate was let in")
	}

	otherDir, _ := writePKI(t)
	other, err := ClientConfig(Files{Cert: filepath.Join(otherDir, "client.crt"), Key: filepath.Join(otherDir, "client.key"), CA: filepath.Join(dir, "ca.crt")}, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(addr, other); err == nil {
		t.Error("a client with a certificate from another CA was let in")
	}

	old := good.Clone()
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if err := dial(addr, old); err == nil {
		t.Error("TLS 1.1 was accepted")
	}

	// A server certificate is not a client certificate.
	asClient, err := ClientConfig(files(dir, "server"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(addr, asClient); err == nil {
		t.Error("a certificate without the client-auth usage was accepted")
	}
}

// TestReload replaces the server's files with a new PKI: new connections
// use it without a restart, and clients of the old CA are turned away.
func TestReload(t *testing.T) {
	dir, _ := writePKI(t)
	logs := &logbuf.Buffer{}
	srv, err := ServerConfig(files(dir, "server"), slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, srv)
	oldClient, err := ClientConfig(files(dir, "client"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(addr, oldClient); err != nil {
		t.Fatal(err)
	}

	newDir, _ := writePKI(t)
	for _, name := range []string{"ca.crt", "server.crt", "server.key"} {
		b, err := os.ReadFile(filepath.Join(newDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	newClient, err := ClientConfig(files(newDir, "client"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for dial(addr, newClient) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the server never picked up the new files")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The old client certificate, trusting the new CA so that the client
	// accepts the server: it is the server that must turn it away.
	oldCert, err := ClientConfig(Files{Cert: filepath.Join(dir, "client.crt"), Key: filepath.Join(dir, "client.key"), CA: filepath.Join(newDir, "ca.crt")}, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(addr, oldCert); err == nil {
		t.Error("a client of the old CA still got in after the rotation")
	}

	// A broken write keeps the last good files in use.
	if err := os.WriteFile(filepath.Join(dir, "server.key"), []byte("half a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Handshakes drive the reloads: dial until the server has read the
	// broken files, every dial meanwhile and after succeeding.
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "cannot be loaded") {
		if time.Now().After(deadline) {
			t.Fatal("the server never read the broken files")
		}
		if err := dial(addr, newClient); err != nil {
			t.Fatalf("a broken key file took the server down: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := dial(addr, newClient); err != nil {
		t.Errorf("a broken key file took the server down: %v", err)
	}
}

func TestFilesCheck(t *testing.T) {
	if err := (Files{}).Check("--xds-tls-"); err != nil {
		t.Errorf("no files: %v", err)
	}
	err := (Files{Cert: "a"}).Check("--xds-tls-")
	if err == nil || !strings.Contains(err.Error(), "--xds-tls-key --xds-tls-ca") {
		t.Errorf("cert only: %v", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8001": true, "[::1]:8001": true, "localhost:8001": true, "127.1.2.3:0": true,
		":8001": false, "0.0.0.0:8001": false, "[::]:8001": false, "10.0.0.1:8001": false, "switchyard.example.com:8001": false, "garbage": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

func TestPKINames(t *testing.T) {
	p, err := NewPKI(PKIOptions{DNSNames: []string{"switchyard.switchyard.svc"}, IPs: []net.IP{net.ParseIP("10.0.0.5")}, ClientName: "envoy", Validity: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	parse := func(b []byte) *x509.Certificate {
		block, _ := pem.Decode(b)
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ca, srv, cli := parse(p.CACert), parse(p.ServerCert), parse(p.ClientCert)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: "switchyard.switchyard.svc", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("server certificate: %v", err)
	}
	if err := srv.VerifyHostname("10.0.0.5"); err != nil {
		t.Errorf("server certificate IP SAN: %v", err)
	}
	if _, err := cli.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if cli.Subject.CommonName != "envoy" || !ca.IsCA || srv.IsCA {
		t.Errorf("names and roles: client %q, CA %v, server CA %v", cli.Subject.CommonName, ca.IsCA, srv.IsCA)
	}
	if _, err := NewPKI(PKIOptions{Validity: time.Hour}); err == nil {
		t.Error("a server certificate without names was issued")
	}
}
