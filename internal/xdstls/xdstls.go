// Package xdstls secures the xDS server with mutual TLS: the server
// presents a certificate, every client must present one signed by the
// configured CA, and TLS 1.2 is the oldest version spoken. The files are
// re-read when they change, so that rotating a certificate (a cert-manager
// renewal, a Secret update reaching a mounted volume) needs no restart.
//
// xDS carries the private keys of every TLS virtual host (SDS) and the
// whole routing table; anyone who can open a stream can read them. Over
// anything but loopback the server therefore refuses to start without TLS
// unless told otherwise (see AllowsPlaintext).
package xdstls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc/credentials"
)

// Files names the PEM files of one side of the connection: its own
// certificate and key, and the CA that signs the other side's.
type Files struct {
	Cert, Key, CA string
}

// Set reports whether any of the files is given.
func (f Files) Set() bool { return f.Cert != "" || f.Key != "" || f.CA != "" }

// Check reports a usage error when the files are given only in part.
func (f Files) Check(flagPrefix string) error {
	if !f.Set() {
		return nil
	}
	var missing []string
	for _, m := range []struct{ name, v string }{{"cert", f.Cert}, {"key", f.Key}, {"ca", f.CA}} {
		if m.v == "" {
			missing = append(missing, flagPrefix+m.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("mutual TLS needs all three of %[1]scert, %[1]skey and %[1]sca; missing %v", flagPrefix, missing)
	}
	return nil
}

// reloadCheckInterval bounds how often the files are checked for changes:
// at most once a second, on a handshake.
const reloadCheckInterval = time.Second

// loaded is one reading of the files.
type loaded struct {
	cert   tls.Certificate
	pool   *x509.CertPool
	stamps []stamp
}

// stamp identifies a version of a file.
type stamp struct {
	size    int64
	modTime time.Time
}

// reloader holds the current reading and re-reads on change.
type reloader struct {
	files  Files
	log    *slog.Logger
	mu     sync.Mutex
	cur    *loaded
	last   time.Time
	client bool
}

func newReloader(f Files, log *slog.Logger, client bool) (*reloader, error) {
	if log == nil {
		log = slog.Default()
	}
	r := &reloader{files: f, log: log, client: client}
	l, err := r.load()
	if err != nil {
		return nil, err
	}
	r.cur, r.last = l, time.Now()
	return r, nil
}

func (r *reloader) stamps() ([]stamp, error) {
	var out []stamp
	for _, p := range []string{r.files.Cert, r.files.Key, r.files.CA} {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		out = append(out, stamp{fi.Size(), fi.ModTime()})
	}
	return out, nil
}

func (r *reloader) load() (*loaded, error) {
	stamps, err := r.stamps()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(r.files.Cert, r.files.Key)
	if err != nil {
		return nil, fmt.Errorf("loading the certificate %s and key %s: %w", r.files.Cert, r.files.Key, err)
	}
	caPEM, err := os.ReadFile(r.files.CA)
	if err != nil {
		return nil, fmt.Errorf("reading the CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("the CA file %s holds no PEM certificate", r.files.CA)
	}
	if err := checkSignedBy(cert, pool, r.client); err != nil {
		r.log.Warn("the xDS certificate is not signed by the CA given for the other side; that only works when both sides use different CAs on purpose", "cert", r.files.Cert, "ca", r.files.CA, "error", err)
	}
	return &loaded{cert: cert, pool: pool, stamps: stamps}, nil
}

// checkSignedBy verifies a certificate against the pool, to warn about a
// mix-up of files early; it is not an error, since each side's CA may
// legitimately differ.
func checkSignedBy(cert tls.Certificate, pool *x509.CertPool, client bool) error {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return err
	}
	usage := x509.ExtKeyUsageServerAuth
	if client {
		usage = x509.ExtKeyUsageClientAuth
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

// current returns the files' current reading, re-reading them when they
// changed (at most once per reloadCheckInterval). A reading that fails
// keeps the previous one: a half-written renewal must not take the server
// down.
func (r *reloader) current() *loaded {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.last) < reloadCheckInterval {
		return r.cur
	}
	r.last = time.Now()
	stamps, err := r.stamps()
	if err != nil || equalStamps(stamps, r.cur.stamps) {
		return r.cur
	}
	l, err := r.load()
	if err != nil {
		r.log.Error("xDS TLS files changed but cannot be loaded; still using the previous ones", "error", err)
		r.cur.stamps = stamps // do not retry until they change again
		return r.cur
	}
	r.log.Info("xDS TLS files reloaded", "cert", r.files.Cert, "ca", r.files.CA)
	r.cur = l
	return l
}

func equalStamps(a, b []stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].size != b[i].size || !a[i].modTime.Equal(b[i].modTime) {
			return false
		}
	}
	return true
}

// ServerConfig returns the xDS server's TLS configuration: TLS 1.2 or
// later, a client certificate signed by the CA required, the certificate
// and CA re-read when their files change.
func ServerConfig(f Files, log *slog.Logger) (*tls.Config, error) {
	if err := f.Check("--xds-tls-"); err != nil {
		return nil, err
	}
	r, err := newReloader(f, log, false)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			l := r.current()
			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
				Certificates: []tls.Certificate{l.cert},
				ClientAuth:   tls.RequireAndVerifyClientCert,
				ClientCAs:    l.pool,
				NextProtos:   []string{"h2"},
			}, nil
		},
	}, nil
}

// ServerCredentials are ServerConfig as gRPC transport credentials.
func ServerCredentials(f Files, log *slog.Logger) (credentials.TransportCredentials, error) {
	c, err := ServerConfig(f, log)
	if err != nil {
		return nil, err
	}
	if log == nil {
		return credentials.NewTLS(c), nil
	}
	return logHandshakeFailures(credentials.NewTLS(c), log), nil
}

// ClientConfig returns a client's TLS configuration for connecting to the
// xDS server: its certificate, and the CA that must have signed the
// server's. serverName is checked against the server certificate's names;
// "" takes it from the address dialled.
func ClientConfig(f Files, serverName string) (*tls.Config, error) {
	if err := f.Check("client "); err != nil {
		return nil, err
	}
	if !f.Set() {
		return nil, errors.New("no client certificate, key and CA given")
	}
	r, err := newReloader(f, slog.Default(), true)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ServerName: serverName,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &r.current().cert, nil
		},
		RootCAs: r.cur.pool,
	}, nil
}

// IsLoopback reports whether a listen address (host:port) accepts
// connections from this machine only: a loopback IP or "localhost". An
// empty host listens on every interface and is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
