package switchyard

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/fall"
)

// Config is everything the plugin needs. Start from DefaultConfig and
// change what you need: New takes every value as given, so a TTL of 0 is a
// TTL of zero, not "the default".
type Config struct {
	// Zones are the zones answered, fully qualified; a cluster named
	// "web.shop" answers "web.shop.<zone>" in each.
	Zones []string
	// ControlPlanes are the xDS servers as host:port, tried in order on
	// each reconnect until one accepts the stream.
	ControlPlanes []string
	// Node is the xDS node id.
	Node string
	// TLS, when set, secures the gRPC connection; nil is plaintext.
	TLS *TLSConfig
	// TTL is the TTL of every record, in whole seconds.
	TTL time.Duration
	// MaxRecords is how many distinct A or AAAA records an answer holds,
	// 1 to 32. Only the first follows Envoy's distribution exactly.
	MaxRecords int
	// Fallthrough passes queries for names that do not exist to the next
	// plugin when they are below one of Fallthrough.Zones (fall.Root for
	// every name); the zero value never falls through.
	Fallthrough fall.F
	// ReconnectBase and ReconnectMax bound the exponential backoff between
	// stream attempts; each delay is jittered to between half and all of
	// base×2^attempt, capped at max.
	ReconnectBase, ReconnectMax time.Duration
	// InitialFetchTimeout ends warming, as in Envoy: Ready reports true
	// once clusters were received and either all their endpoints arrived or
	// this long has passed since the clusters did.
	InitialFetchTimeout time.Duration
}

// TLSConfig is the tls directive: a client certificate (for mTLS) and the
// CA that signs the control plane's certificate. Empty files mean no
// client certificate and the system roots. Certificate and key are read
// again at every handshake, so rotated files are picked up on reconnect.
type TLSConfig struct {
	CertFile, KeyFile, CAFile string
	// ServerName is checked against the control plane's certificate;
	// needed when the address is an IP.
	ServerName string
}

// Defaults.
const (
	DefaultNode       = "coredns"
	DefaultTTL        = 5 * time.Second
	DefaultMaxRecords = 1
	maxMaxRecords     = 32
	maxTTL            = 24 * time.Hour
)

// DefaultConfig returns the configuration the Corefile starts from, for
// the given zones and control planes (host:port).
func DefaultConfig(zones []string, controlPlanes ...string) Config {
	return Config{
		Zones:               zones,
		ControlPlanes:       controlPlanes,
		Node:                DefaultNode,
		TTL:                 DefaultTTL,
		MaxRecords:          DefaultMaxRecords,
		ReconnectBase:       250 * time.Millisecond,
		ReconnectMax:        30 * time.Second,
		InitialFetchTimeout: 15 * time.Second,
	}
}

// validate checks a Config and normalizes its zones. Each message says
// what to change.
func (c *Config) validate() error {
	var errs []error
	if len(c.Zones) == 0 {
		errs = append(errs, errors.New("no zones: set Config.Zones or give the server block a zone"))
	}
	zones := make([]string, 0, len(c.Zones))
	for _, z := range c.Zones {
		n := plugin.Host(z).NormalizeExact()
		if len(n) == 0 {
			errs = append(errs, fmt.Errorf("zone %q is not a domain name", z))
			continue
		}
		zones = append(zones, n...)
	}
	c.Zones = zones
	if len(c.ControlPlanes) == 0 {
		errs = append(errs, errors.New("no control plane: give its address, e.g. switchyard grpc://127.0.0.1:8001"))
	}
	for _, cp := range c.ControlPlanes {
		if _, _, err := net.SplitHostPort(cp); err != nil {
			errs = append(errs, fmt.Errorf("control plane %q: want host:port: %v", cp, err))
		}
	}
	if c.Node == "" {
		errs = append(errs, errors.New("node id is empty: leave node out for the default \"coredns\""))
	}
	if c.TTL < 0 || c.TTL > maxTTL || c.TTL%time.Second != 0 {
		errs = append(errs, fmt.Errorf("ttl %s: want whole seconds from 0s to %s", c.TTL, maxTTL))
	}
	if c.MaxRecords < 1 || c.MaxRecords > maxMaxRecords {
		errs = append(errs, fmt.Errorf("max_records %d: want 1 to %d", c.MaxRecords, maxMaxRecords))
	}
	if c.ReconnectBase <= 0 || c.ReconnectMax < c.ReconnectBase {
		errs = append(errs, fmt.Errorf("reconnect backoff %s..%s: want 0 < base <= max (DefaultConfig has 250ms..30s)", c.ReconnectBase, c.ReconnectMax))
	}
	if c.InitialFetchTimeout <= 0 {
		errs = append(errs, errors.New("initial fetch timeout must be positive (DefaultConfig has 15s)"))
	}
	if c.TLS != nil {
		if _, err := c.TLS.config(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// config builds the crypto/tls client configuration, loading the CA now
// and the client certificate at every handshake.
func (t *TLSConfig) config() (*tls.Config, error) {
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("tls: give both a certificate and a key, or neither")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls: reading CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
			return nil, fmt.Errorf("tls: loading client certificate: %w", err)
		}
		cert, key := t.CertFile, t.KeyFile
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c, err := tls.LoadX509KeyPair(cert, key)
			if err != nil {
				return nil, fmt.Errorf("tls: reloading client certificate: %w", err)
			}
			return &c, nil
		}
	}
	return cfg, nil
}

// controlPlaneLabel is the metrics label of a configuration's control
// planes.
func (c *Config) controlPlaneLabel() string { return strings.Join(c.ControlPlanes, ",") }
