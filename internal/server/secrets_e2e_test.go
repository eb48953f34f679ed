package server_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	envoy_service_secret_v3 "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

// secretsSetup writes Secrets that must be served and Secrets that must
// not, each with the reason in its name:
//
//	shop/served             the certificate of a valid proxy
//	shop/client-ca          the client CA of that proxy (served as .../ca)
//	other/delegated         another namespace's, delegated to shop and used
//	shop/unreferenced       nobody refers to it
//	other/not-delegated     used by shop/thief without a delegation
//	shop/of-invalid-proxy   used by a proxy whose host name is invalid
//	other/delegated-unused  delegated to shop, but nobody uses it
func secretsSetup(t *testing.T) string {
	t.Helper()
	p, err := xdstls.NewPKI(xdstls.PKIOptions{DNSNames: []string{"shop.example.com"}, ClientName: "x", Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	indent := func(b []byte) string { return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n    ") }
	var b strings.Builder
	for _, s := range []string{"shop/served", "other/delegated", "shop/unreferenced", "other/not-delegated", "shop/of-invalid-proxy", "other/delegated-unused"} {
		ns, name, _ := strings.Cut(s, "/")
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ntype: kubernetes.io/tls\nstringData:\n  tls.crt: |\n    %s\n  tls.key: |\n    %s\n---\n", name, ns, indent(p.ServerCert), indent(p.ServerKey))
	}
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: client-ca, namespace: shop}\nstringData:\n  ca.crt: |\n    %s\n---\n", indent(p.CACert))
	b.WriteString(`apiVersion: switchyard.dev/v1
kind: TLSCertificateDelegation
metadata: {name: to-shop, namespace: other}
spec:
  delegations:
  - {secretName: delegated, targetNamespaces: [shop]}
  - {secretName: delegated-unused, targetNamespaces: [shop]}
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: shop}
spec: {ports: [{port: 80}]}
---
`)
	for _, p := range []struct{ name, fqdn, tls string }{
		{"web", "web.example.com", "{secretName: served, clientValidation: {caSecret: client-ca}}"},
		{"partner", "partner.example.com", "{secretName: other/delegated}"},
		{"thief", "thief.example.com", "{secretName: other/not-delegated}"},
		{"broken", "not a host name", "{secretName: of-invalid-proxy}"},
	} {
		fmt.Fprintf(&b, "apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: %s, namespace: shop}\nspec:\n  virtualhost: {fqdn: %q, tls: %s}\n  routes: [{services: [{name: app, port: 80}]}]\n---\n", p.name, p.fqdn, p.tls)
	}
	dir := t.TempDir()
	writeFile(t, dir, "objects.yaml", b.String())
	return dir
}

// servedSecrets are the SDS names secretsSetup must serve, and allSecrets
// every name a client might ask for.
var (
	servedSecrets = []string{"other/delegated", "shop/client-ca/ca", "shop/served"}
	allSecrets    = append([]string{"shop/unreferenced", "other/not-delegated", "shop/of-invalid-proxy", "other/delegated-unused", "shop/unreferenced/ca"}, servedSecrets...)
)

// TestOnlyReferencedSecretsAreServed: the cache holds exactly the Secrets
// valid objects use (delegated where they cross a namespace), and an Envoy
// asking for every name, or for all, receives those and nothing else.
func TestOnlyReferencedSecretsAreServed(t *testing.T) {
	s := startServer(t, secretsSetup(t), "127.0.0.1:0", nil)
	var cached []string
	for _, r := range s.Cache().Resources(xdsres.GroupEnvoy, resource.SecretType) {
		cached = append(cached, r.Name)
	}
	if fmt.Sprint(cached) != fmt.Sprint(servedSecrets) {
		t.Errorf("the cache holds secrets %v, want %v", cached, servedSecrets)
	}
	for _, g := range []xdsres.Group{xdsres.GroupGRPC, xdsres.GroupDNS} {
		if rs := s.Cache().Resources(g, resource.SecretType); len(rs) > 0 {
			t.Errorf("group %s holds %d secrets", g, len(rs))
		}
	}

	cc := dialXDS(t, s.XDSAddr().String())
	for name, names := range map[string][]string{"by name": allSecrets, "wildcard": {"*"}} {
		resp, err := sotwOnce(context.Background(), cc, envoyNode, resource.SecretType, 5*time.Second, names...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := secretNames(t, resp.GetResources()); fmt.Sprint(got) != fmt.Sprint(servedSecrets) {
			t.Errorf("%s: Envoy received %v, want %v", name, got, servedSecrets)
		}
	}
}

func secretNames[T interface{ GetValue() []byte }](t *testing.T, rs []T) []string {
	t.Helper()
	var out []string
	for _, a := range rs {
		var s envoy_transport_socket_tls_v3.Secret
		if err := proto.Unmarshal(a.GetValue(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s.GetName())
	}
	sort.Strings(out)
	return out
}

// TestSecretsGoToEnvoyOnly asks for every Secret, by name and by wildcard,
// over ADS (state of the world and delta) and over SDS, as gRPC clients
// and DNS balancers identify themselves (metadata, user agent, node id):
// nothing may come back. An Envoy on the same server gets them, so the
// silence is not an outage.
func TestSecretsGoToEnvoyOnly(t *testing.T) {
	s := startServer(t, secretsSetup(t), "127.0.0.1:0", nil)
	cc := dialXDS(t, s.XDSAddr().String())
	nodes := map[string]*envoy_config_core_v3.Node{
		"grpc by metadata":                 nodeWithGroup("g1", "grpc", ""),
		"dns by metadata":                  nodeWithGroup("d1", "dns", ""),
		"grpc by user agent":               {Id: "g2", UserAgentName: "gRPC Go"},
		"dns by node id":                   {Id: xdsres.DNSNodeID},
		"grpc by metadata, envoy by agent": nodeWithGroup("g3", "grpc", "envoy"),
	}
	t.Run("others", func(t *testing.T) {
		for name, node := range nodes {
			for _, names := range [][]string{allSecrets, {"*"}} {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					if got := askAllWays(t, cc, node, names, time.Second); len(got) > 0 {
						t.Errorf("asking for %v received secrets %v", names, got)
					}
				})
			}
		}
	})
	if got := askAllWays(t, cc, envoyNode, allSecrets, 2*time.Second); len(got) != 3*len(servedSecrets) {
		t.Errorf("an Envoy received %v, want %v three times", got, servedSecrets)
	}
}

// askAllWays requests Secrets over ADS state of the world, ADS delta and
// SDS, and returns every secret name received within wait.
func askAllWays(t *testing.T, cc *grpc.ClientConn, node *envoy_config_core_v3.Node, names []string, wait time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var got []string
	req := &envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.SecretType, ResourceNames: names}
	ads, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err == nil && ads.Send(req) == nil {
		if resp, err := ads.Recv(); err == nil {
			got = append(got, secretNames(t, resp.GetResources())...)
		}
	}
	sds, err := envoy_service_secret_v3.NewSecretDiscoveryServiceClient(cc).StreamSecrets(ctx)
	if err == nil && sds.Send(req) == nil {
		if resp, err := sds.Recv(); err == nil {
			got = append(got, secretNames(t, resp.GetResources())...)
		}
	}
	delta, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
	if err == nil && delta.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: node, TypeUrl: resource.SecretType, ResourceNamesSubscribe: names}) == nil {
		if resp, err := delta.Recv(); err == nil {
			for _, r := range resp.GetResources() {
				got = append(got, r.GetName())
			}
		}
	}
	return got
}
