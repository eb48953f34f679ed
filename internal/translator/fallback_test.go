package translator

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestFallbackChain: the fallback chain comes after every SNI chain, has
// no server names (so it takes the connections they leave), requires TLS,
// and serves the route configuration of the hosts that use it, each with
// its own routes; without such a host there is neither.
func TestFallbackChain(t *testing.T) {
	fallback := &dag.Secret{Name: "ops/fallback"}
	host := func(fqdn string, uses bool) *dag.SecureVirtualHost {
		s := &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: fqdn, Routes: []*dag.Route{forward(nil)}}, Secret: &dag.Secret{Name: "ns/cert"}}
		if uses {
			s.FallbackCertificate = fallback
		}
		return s
	}
	hosts := []*dag.SecureVirtualHost{host("b.com", true), host("a.com", false), host("*.c.com", true)}

	l := HTTPSListener(hosts, DefaultOptions())
	if n := len(l.GetFilterChains()); n != 4 {
		t.Fatalf("want 3 SNI chains and the fallback chain, got %d", n)
	}
	last := l.FilterChains[3]
	if last.Name != FallbackChainName || len(last.FilterChainMatch.GetServerNames()) != 0 || last.FilterChainMatch.GetTransportProtocol() != "tls" {
		t.Fatalf("the last chain is not the fallback chain: %v", last)
	}
	if !proto.Equal(last, FallbackFilterChain("ops/fallback")) {
		t.Errorf("the fallback chain does not terminate with the fallback certificate: %v", last)
	}
	for _, fc := range l.FilterChains[:3] {
		if len(fc.FilterChainMatch.GetServerNames()) != 1 {
			t.Errorf("chain %s: want its host's server name", fc.Name)
		}
	}

	rc := FallbackRouteConfig(fallbackVirtualHosts(hosts))
	if rc.GetName() != FallbackRouteName || len(rc.VirtualHosts) != 2 {
		t.Fatalf("want the two hosts that use the fallback, got %v", rc)
	}
	if rc.VirtualHosts[0].Name != "*.c.com" || rc.VirtualHosts[1].Name != "b.com" {
		t.Errorf("virtual hosts not in name order: %s, %s", rc.VirtualHosts[0].Name, rc.VirtualHosts[1].Name)
	}
	if d := rc.VirtualHosts[0].Domains; len(d) != 1 || d[0] != "*.c.com" {
		t.Errorf("a wildcard host must answer for its own domain in the shared configuration, got %v", d)
	}
	own := HTTPSRouteConfig(hosts[0]).VirtualHosts[0]
	if !proto.Equal(rc.VirtualHosts[1], own) {
		t.Errorf("b.com's fallback virtual host differs from its own route configuration's")
	}

	none := []*dag.SecureVirtualHost{host("a.com", false)}
	if l := HTTPSListener(none, DefaultOptions()); len(l.GetFilterChains()) != 1 {
		t.Errorf("without a host that uses it, no fallback chain: %d chains", len(l.GetFilterChains()))
	}
	if rc := FallbackRouteConfig(fallbackVirtualHosts(none)); rc != nil {
		t.Errorf("without a host that uses it, no fallback route configuration: %v", rc)
	}

	// A host whose own chain needs a client certificate never reaches the
	// shared chain, even if the DAG let it through.
	mtls := host("m.com", true)
	mtls.ClientCA = &dag.Secret{Name: "ns/ca"}
	if FallbackVirtualHost(mtls) != nil {
		t.Error("a host with client validation was put on the fallback chain")
	}
}

// TestFallbackOnlyForEnvoy: gRPC clients and DNS balancers have no filter
// chains to fall back on, so their groups are the same whether hosts use
// the fallback certificate or not.
func TestFallbackOnlyForEnvoy(t *testing.T) {
	build := func(fallback bool) *dag.DAG {
		svh := &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: "a.com", Routes: []*dag.Route{forward(nil)}}, Secret: &dag.Secret{Name: "ns/cert"}}
		if fallback {
			svh.FallbackCertificate = &dag.Secret{Name: "ops/fallback"}
		}
		return &dag.DAG{SecureVirtualHosts: []*dag.SecureVirtualHost{svh}}
	}
	for _, g := range []xdsres.Group{xdsres.GroupGRPC, xdsres.GroupDNS} {
		with, err := ForGroup(g, build(true), nil, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		without, _ := ForGroup(g, build(false), nil, DefaultOptions())
		a, b := with.All(), without.All()
		if len(a) != len(b) {
			t.Fatalf("%s: %d resources with the fallback, %d without", g, len(a), len(b))
		}
		for i := range a {
			if !proto.Equal(a[i], b[i]) {
				t.Errorf("%s: %s differs with the fallback", g, xdsres.ResourceName(a[i]))
			}
		}
	}
	envoy, _ := ForGroup(xdsres.GroupEnvoy, build(true), nil, DefaultOptions())
	plain, _ := ForGroup(xdsres.GroupEnvoy, build(false), nil, DefaultOptions())
	if len(envoy.Routes) != len(plain.Routes)+1 {
		t.Errorf("the envoy group must gain the fallback route configuration: %d routes, %d without", len(envoy.Routes), len(plain.Routes))
	}
}
