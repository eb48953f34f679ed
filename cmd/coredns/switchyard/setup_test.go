package switchyard

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	cert := filepath.Join(dir, "client.pem")
	key := filepath.Join(dir, "client-key.pem")
	pki := newTestPKI(t)
	pki.write(t, ca, cert, key)

	cases := []struct {
		name   string
		input  string
		want   func(*Config)
		errHas string
	}{
		{name: "address only", input: `switchyard grpc://127.0.0.1:8001`},
		{name: "default port", input: `switchyard grpc://xds.example`, want: func(c *Config) { c.ControlPlanes = []string{"xds.example:443"} }},
		{name: "ipv6", input: `switchyard grpc://[::1]:8001 grpc://[::1]`, want: func(c *Config) { c.ControlPlanes = []string{"[::1]:8001", "[::1]:443"} }},
		{name: "every option", input: `switchyard grpc://127.0.0.1:8001 grpc://127.0.0.2:8001 {
			node coredns-eu-1
			tls ` + cert + ` ` + key + ` ` + ca + `
			tls_servername xds.switchyard.svc
			ttl 30s
			max_records 3
			fallthrough example.org
		}`, want: func(c *Config) {
			c.ControlPlanes = []string{"127.0.0.1:8001", "127.0.0.2:8001"}
			c.Node = "coredns-eu-1"
			c.TLS = &TLSConfig{CertFile: cert, KeyFile: key, CAFile: ca, ServerName: "xds.switchyard.svc"}
			c.TTL = 30 * time.Second
			c.MaxRecords = 3
			c.Fallthrough.Zones = []string{"example.org."}
		}},
		{name: "ttl in seconds", input: "switchyard grpc://127.0.0.1:8001 {\nttl 0\n}", want: func(c *Config) { c.TTL = 0 }},
		{name: "tls with CA only", input: "switchyard grpc://127.0.0.1:8001 {\ntls " + ca + "\n}", want: func(c *Config) { c.TLS = &TLSConfig{CAFile: ca} }},
		{name: "bare fallthrough", input: "switchyard grpc://127.0.0.1:8001 {\nfallthrough\n}", want: func(c *Config) { c.Fallthrough.Zones = []string{"."} }},

		{name: "no address", input: `switchyard`, errHas: "needs the control plane's address, e.g. 'switchyard grpc://127.0.0.1:8001'"},
		{name: "no scheme", input: `switchyard 127.0.0.1:8001`, errHas: "must start with grpc://: write grpc://127.0.0.1:8001"},
		{name: "wrong scheme", input: `switchyard https://cp:8001`, errHas: "write grpc://cp:8001"},
		{name: "path", input: `switchyard grpc://cp:8001/x`, errHas: "nothing after the port"},
		{name: "unknown option", input: "switchyard grpc://127.0.0.1:8001 {\nignore_health\n}", errHas: `unknown property "ignore_health"; the switchyard block accepts:`},
		{name: "node without id", input: "switchyard grpc://127.0.0.1:8001 {\nnode\n}", errHas: "node takes one argument"},
		{name: "bad ttl", input: "switchyard grpc://127.0.0.1:8001 {\nttl soon\n}", errHas: "want a duration like 5s or a number of seconds"},
		{name: "fractional ttl", input: "switchyard grpc://127.0.0.1:8001 {\nttl 1500ms\n}", errHas: "want whole seconds"},
		{name: "negative ttl", input: "switchyard grpc://127.0.0.1:8001 {\nttl -5\n}", errHas: "want whole seconds"},
		{name: "max_records 0", input: "switchyard grpc://127.0.0.1:8001 {\nmax_records 0\n}", errHas: "want a number from 1 to 32"},
		{name: "servername without tls", input: "switchyard grpc://127.0.0.1:8001 {\ntls_servername x\n}", errHas: "tls_servername needs tls"},
		{name: "tls too many", input: "switchyard grpc://127.0.0.1:8001 {\ntls a b c d\n}", errHas: "at most three arguments"},
		{name: "tls missing files", input: "switchyard grpc://127.0.0.1:8001 {\ntls /nonexistent/ca.pem\n}", errHas: "tls: reading CA"},
		{name: "tls cert without key", input: "switchyard grpc://127.0.0.1:8001 {\ntls " + cert + " " + ca + "\n}", errHas: "tls: loading client certificate"},
		{name: "twice", input: "switchyard grpc://127.0.0.1:8001\nswitchyard grpc://127.0.0.1:8002", errHas: "this plugin can only be used once per Server Block"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctl := caddy.NewTestController("dns", c.input)
			ctl.ServerBlockKeys = []string{"lb.example.org:1053"}
			got, err := Parse(ctl)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("error %v, want one containing %q", err, c.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := DefaultConfig([]string{"lb.example.org."}, "127.0.0.1:8001")
			if c.want != nil {
				c.want(&want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseString(t *testing.T) {
	cfg, err := ParseString([]string{"a.example", "b.example."}, "switchyard grpc://10.0.0.1:8001 {\n ttl 10\n}")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.example.", "b.example."}; !cmp.Equal(cfg.Zones, want) || cfg.TTL != 10*time.Second {
		t.Errorf("zones %v ttl %s", cfg.Zones, cfg.TTL)
	}
	if _, err := ParseString(nil, "switchyard grpc://10.0.0.1:8001"); err == nil || !strings.Contains(err.Error(), "no zones") {
		t.Errorf("no zones: error %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	cfg := Config{Zones: []string{"lb.example.org"}}
	_, err := New(cfg)
	if err == nil {
		t.Fatal("New accepted a zero Config")
	}
	for _, want := range []string{"no control plane", "node id is empty", "max_records 0: want 1 to 32", "DefaultConfig has 250ms..30s", "DefaultConfig has 15s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := New(DefaultConfig([]string{"lb.example.org"}, "127.0.0.1:8001")); err != nil {
		t.Errorf("DefaultConfig: %v", err)
	}
}

func TestSetupRegistersPlugin(t *testing.T) {
	ctl := caddy.NewTestController("dns", "switchyard grpc://127.0.0.1:8001")
	ctl.ServerBlockKeys = []string{"lb.example.org"}
	if err := setup(ctl); err != nil {
		t.Fatalf("setup: %v", err)
	}
	if n := len(dnsserver.GetConfig(ctl).Plugin); n != 1 {
		t.Errorf("setup added %d plugins, want 1", n)
	}
}
