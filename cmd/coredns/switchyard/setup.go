package switchyard

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/caddy/caddyfile"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
)

// pluginName is the directive and the plugin's name.
const pluginName = "switchyard"

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	cfg, err := Parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	s, err := New(cfg)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	c.OnStartup(s.Start)
	c.OnShutdown(s.Stop)
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		s.Next = next
		return s
	})
	return nil
}

// Parse reads the switchyard directive of a server block, with the block's
// zones. It is the parse function CoreDNS calls; another plugin holding a
// caddy.Controller positioned on a switchyard directive may call it too.
func Parse(c *caddy.Controller) (Config, error) {
	return parse(&c.Dispenser, c.ServerBlockKeys)
}

// ParseString parses Corefile text holding one switchyard directive, for
// the given zones, without a caddy.Controller: for plugins that embed this
// one and take its configuration from elsewhere, and for tests.
//
//	cfg, err := switchyard.ParseString([]string{"lb.example.org."}, "switchyard grpc://10.0.0.1:8001 {\n ttl 10s\n}")
func ParseString(zones []string, corefile string) (Config, error) {
	d := caddyfile.NewDispenser("Corefile", strings.NewReader(corefile))
	return parse(&d, zones)
}

// syntax is the directive's grammar, shown in errors.
const syntax = `switchyard grpc://HOST:PORT... {
    node ID
    tls [CERT KEY] [CA]
    tls_servername NAME
    ttl DURATION
    max_records N
    fallthrough [ZONES...]
}`

func parse(d *caddyfile.Dispenser, serverBlockKeys []string) (Config, error) {
	var cfg Config
	seen := false
	for d.Next() {
		if seen {
			return cfg, plugin.ErrOnce
		}
		seen = true
		args := d.RemainingArgs()
		if len(args) == 0 {
			return cfg, d.Errf("switchyard needs the control plane's address, e.g. 'switchyard grpc://127.0.0.1:8001'; syntax:\n%s", syntax)
		}
		targets := make([]string, 0, len(args))
		for _, a := range args {
			t, err := parseTarget(a)
			if err != nil {
				return cfg, d.Err(err.Error())
			}
			targets = append(targets, t)
		}
		cfg = DefaultConfig(plugin.OriginsFromArgsOrServerBlock(nil, serverBlockKeys), targets...)
		var serverName string
		var sawServerName bool
		for d.NextBlock() {
			opt := d.Val()
			vals := d.RemainingArgs()
			switch opt {
			case "node":
				if len(vals) != 1 {
					return cfg, d.Errf("node takes one argument, the xDS node id, e.g. 'node coredns-eu-1'")
				}
				cfg.Node = vals[0]
			case "tls":
				if len(vals) > 3 {
					return cfg, d.Errf("tls takes at most three arguments: 'tls [CERT KEY] [CA]'")
				}
				t := &TLSConfig{}
				switch len(vals) {
				case 1:
					t.CAFile = vals[0]
				case 2:
					t.CertFile, t.KeyFile = vals[0], vals[1]
				case 3:
					t.CertFile, t.KeyFile, t.CAFile = vals[0], vals[1], vals[2]
				}
				cfg.TLS = t
			case "tls_servername":
				if len(vals) != 1 {
					return cfg, d.Errf("tls_servername takes one argument, the name in the control plane's certificate")
				}
				serverName, sawServerName = vals[0], true
			case "ttl":
				if len(vals) != 1 {
					return cfg, d.Errf("ttl takes one argument, e.g. 'ttl 5s' or 'ttl 5'")
				}
				ttl, err := parseTTL(vals[0])
				if err != nil {
					return cfg, d.Err(err.Error())
				}
				cfg.TTL = ttl
			case "max_records":
				if len(vals) != 1 {
					return cfg, d.Errf("max_records takes one argument, the number of A/AAAA records per answer (1 to %d)", maxMaxRecords)
				}
				n, err := strconv.Atoi(vals[0])
				if err != nil || n < 1 || n > maxMaxRecords {
					return cfg, d.Errf("max_records %q: want a number from 1 to %d", vals[0], maxMaxRecords)
				}
				cfg.MaxRecords = n
			case "fallthrough":
				cfg.Fallthrough.SetZonesFromArgs(vals)
			default:
				return cfg, d.Errf("unknown property %q; the switchyard block accepts:\n%s", opt, syntax)
			}
		}
		if sawServerName {
			if cfg.TLS == nil {
				return cfg, d.Errf("tls_servername needs tls: add 'tls' (system roots) or 'tls CA' to the block")
			}
			cfg.TLS.ServerName = serverName
		}
	}
	if !seen {
		return cfg, fmt.Errorf("no switchyard directive found")
	}
	if err := cfg.validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// parseTarget accepts grpc://HOST[:PORT], the traffic plugin's form; the
// port defaults to 443.
func parseTarget(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, "grpc://")
	if !ok {
		host := s
		if i := strings.Index(s, "://"); i >= 0 {
			host = s[i+3:]
		}
		return "", fmt.Errorf("control plane %q must start with grpc://: write grpc://%s", s, host)
	}
	if rest == "" || strings.ContainsAny(rest, "/?#") {
		return "", fmt.Errorf("control plane %q: want grpc://HOST[:PORT] with nothing after the port", s)
	}
	if !hasPort(rest) {
		rest += ":443"
	}
	return rest, nil
}

func hasPort(hostport string) bool {
	if strings.HasPrefix(hostport, "[") {
		return strings.Contains(hostport, "]:")
	}
	return strings.Count(hostport, ":") == 1
}

// parseTTL accepts a Go duration ("5s", "1m") or a number of seconds.
func parseTTL(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		s = strconv.Itoa(n) + "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("ttl %q: want a duration like 5s or a number of seconds", s)
	}
	if d < 0 || d%time.Second != 0 || d > maxTTL {
		return 0, fmt.Errorf("ttl %q: want whole seconds from 0s to %s", s, maxTTL)
	}
	return d, nil
}
