package pipeline

import (
	"strings"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestGateWithholdsOnlyTheFallbackChain: when the fallback certificate's
// Secret is withheld, the gate leaves out the fallback chain, which refers
// to it, and nothing else: the HTTPS listener goes out with the SNI
// chains, and the hosts that use the fallback are told, through the
// owners of the fallback route configuration.
func TestGateWithholdsOnlyTheFallbackChain(t *testing.T) {
	sni := translator.HTTPSFilterChain(&dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: "a.example.com"}, Secret: &dag.Secret{Name: "shop/tls"}})
	l := translator.HTTPSListenerWithChains([]*envoy_config_listener_v3.FilterChain{sni, translator.FallbackFilterChain("ops/fallback")}, translator.DefaultOptions())
	good := &envoy_transport_socket_tls_v3.Secret{Name: "shop/tls", Type: &envoy_transport_socket_tls_v3.Secret_TlsCertificate{TlsCertificate: &envoy_transport_socket_tls_v3.TlsCertificate{
		CertificateChain: &envoy_config_core_v3.DataSource{Specifier: &envoy_config_core_v3.DataSource_InlineString{InlineString: "cert"}},
	}}}
	// A certificate read from a file with no name fails validation: a
	// Secret the gate holds back.
	bad := &envoy_transport_socket_tls_v3.Secret{Name: "ops/fallback", Type: &envoy_transport_socket_tls_v3.Secret_TlsCertificate{TlsCertificate: &envoy_transport_socket_tls_v3.TlsCertificate{
		CertificateChain: &envoy_config_core_v3.DataSource{Specifier: &envoy_config_core_v3.DataSource_Filename{}},
	}}}
	rc := func(name string) *envoy_config_route_v3.RouteConfiguration {
		return &envoy_config_route_v3.RouteConfiguration{Name: name}
	}
	target := incremental.Targets{
		resource.ListenerType: xdsres.SetOf(map[string]*xdsres.Resource{translator.HTTPSListenerName: mustEncode(t, l)}),
		resource.RouteType: xdsres.SetOf(map[string]*xdsres.Resource{
			translator.HTTPSRouteName("a.example.com"): mustEncode(t, rc(translator.HTTPSRouteName("a.example.com"))),
			translator.FallbackRouteName:               mustEncode(t, rc(translator.FallbackRouteName)),
		}),
		resource.SecretType: xdsres.SetOf(map[string]*xdsres.Resource{"shop/tls": mustEncode(t, good), "ops/fallback": mustEncode(t, bad)}),
	}
	gt := NewGate()
	served, _, _ := gt.Pass(xdsres.GroupEnvoy, target, nil, true)
	got, ok := served[resource.ListenerType].Get(translator.HTTPSListenerName).Decoded().(*envoy_config_listener_v3.Listener)
	if !ok {
		t.Fatal("the HTTPS listener was withheld whole")
	}
	if len(got.GetFilterChains()) != 1 || got.FilterChains[0].GetFilterChainMatch().GetServerNames()[0] != "a.example.com" {
		t.Fatalf("want the listener with a.example.com's chain alone, got %v", got.GetFilterChains())
	}
	owners := func(g xdsres.Group, typ, name string) []objects.Key {
		if typ == resource.RouteType && name == translator.FallbackRouteName {
			return []objects.Key{{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: "uses-fallback"}}
		}
		return nil
	}
	conds := RejectionConditions(gt.Rejected(), owners)
	cs := conds[objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: "uses-fallback"}]
	found := false
	for _, c := range cs {
		found = found || strings.Contains(c.Message, "filter chain for "+translator.FallbackChainName+`: refers to Secret "ops/fallback", which is withheld`)
	}
	if !found {
		t.Fatalf("the host that uses the fallback must be told its chain is withheld; conditions %v", conds)
	}
}
