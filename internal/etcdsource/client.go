package etcdsource

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// ClientOptions say how to reach and authenticate to an etcd cluster.
type ClientOptions struct {
	Endpoints []string
	// CA verifies the servers' certificates; Cert and Key are the client's
	// certificate, for clusters with --client-cert-auth. Any of them turns
	// TLS on.
	CA, Cert, Key string
	// Username and the password in PasswordFile log in to a cluster with
	// auth enabled. The password is read from a file so that it is never
	// on a command line.
	Username, PasswordFile string
	// DialTimeout bounds the first connection; zero means 5s.
	DialTimeout time.Duration
}

// NewClient connects to etcd. Connecting does not wait for a server:
// reads and writes fail (and are retried by callers) until one answers.
func NewClient(o ClientOptions) (*clientv3.Client, error) {
	if len(o.Endpoints) == 0 {
		return nil, errors.New("no etcd endpoints: give --etcd-endpoints URL[,URL]")
	}
	cfg := clientv3.Config{
		Endpoints:   o.Endpoints,
		DialTimeout: o.DialTimeout,
		// The client logs every retry at warn through zap; the source
		// reports reachability itself, once per change.
		Logger: zap.NewNop(),
		// Keepalives notice a dead connection (a server gone without a
		// FIN) in seconds rather than at the kernel's TCP timeout.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		// gRPC's default reconnect backoff grows to 120s, so a watch
		// could resume minutes after etcd came back from a long outage;
		// etcd is few servers, and asking every 2s at most is cheap.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
			MinConnectTimeout: 5 * time.Second,
		})},
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if o.CA != "" || o.Cert != "" || o.Key != "" {
		tc, err := tlsConfig(o)
		if err != nil {
			return nil, err
		}
		cfg.TLS = tc
	}
	if o.Username != "" || o.PasswordFile != "" {
		if o.Username == "" || o.PasswordFile == "" {
			return nil, errors.New("--etcd-username and --etcd-password-file go together")
		}
		b, err := os.ReadFile(o.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("reading the etcd password: %w", err)
		}
		cfg.Username, cfg.Password = o.Username, strings.TrimRight(string(b), "\r\n")
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", strings.Join(o.Endpoints, ","), err)
	}
	return c, nil
}

func tlsConfig(o ClientOptions) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if (o.Cert == "") != (o.Key == "") {
		return nil, errors.New("--etcd-cert and --etcd-key go together")
	}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			return nil, fmt.Errorf("etcd client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	if o.CA != "" {
		pem, err := os.ReadFile(o.CA)
		if err != nil {
			return nil, fmt.Errorf("etcd CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd CA %s: no PEM certificate in it", o.CA)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}
