package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// TestDNSFlags parses the flags of DNS-resolved upstreams as render and
// serve register them, and refuses what Envoy would, saying what to write.
func TestDNSFlags(t *testing.T) {
	parse := func(args ...string) (dag.Options, translator.Options, error) {
		var d dag.Options
		tr := translator.DefaultOptions()
		f := pflag.NewFlagSet("render", pflag.ContinueOnError)
		f.SetOutput(&strings.Builder{})
		addBuildFlags(f, &d, &tr)
		return d, tr, f.Parse(args)
	}
	d, tr, err := parse("--enable-external-name-services", "--dns-resolvers", "10.0.0.10, [fd00::10]:5353", "--dns-resolvers", "[::ffff:10.0.0.11]:54", "--dns-refresh-rate", "30s")
	if err != nil {
		t.Fatal(err)
	}
	if !d.ExternalNameServices || tr.DNSRefreshRate != 30*time.Second {
		t.Errorf("external names %v, refresh %v", d.ExternalNameServices, tr.DNSRefreshRate)
	}
	var got []string
	for _, r := range tr.DNSResolvers {
		got = append(got, fmt.Sprintf("%s/%d", r.Addr, r.Port))
	}
	if strings.Join(got, " ") != "10.0.0.10/53 fd00::10/5353 10.0.0.11/54" {
		t.Errorf("resolvers %v", tr.DNSResolvers)
	}
	if d, tr, _ := parse(); d.ExternalNameServices || tr.DNSResolvers != nil || tr.DNSRefreshRate != 0 {
		t.Errorf("defaults changed something: %v %v %v", d.ExternalNameServices, tr.DNSResolvers, tr.DNSRefreshRate)
	}
	for _, bad := range [][]string{
		{"--dns-resolvers", "dns.example.com"},
		{"--dns-resolvers", "10.0.0.10:0"},
		{"--dns-resolvers", "10.0.0.10:70000"},
		{"--dns-resolvers", "fe80::1%eth0"},
		{"--dns-resolvers", ""},
		{"--dns-refresh-rate", "0s"},
		{"--dns-refresh-rate", "1ms"},
		{"--dns-refresh-rate", "-5s"},
		{"--dns-refresh-rate", "often"},
	} {
		_, _, err := parse(bad...)
		if err == nil || !strings.Contains(err.Error(), "such as") {
			t.Errorf("%v: %v, want an error saying what to write", bad, err)
		}
	}
}
