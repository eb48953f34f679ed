package incremental

import (
	"sort"
	"testing"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// fallbackCertificate is the Secret TestIncrementalEqualsFullBuild serves
// as the fallback certificate: one team's, which steps delete, break and
// make again, and which no other team has a delegation of.
var fallbackCertificate = types.NamespacedName{Namespace: "team-0", Name: "team-tls"}

// enableFallback has every other secure root enable the fallback
// certificate, and returns their keys: the generated set has none, and a
// step enables it on a root rarely.
func enableFallback(snap *objects.Snapshot) []objects.Key {
	var roots []types.NamespacedName
	for nn, p := range snap.HTTPProxies {
		if vh := p.Spec.VirtualHost; vh != nil && vh.TLS != nil {
			roots = append(roots, nn)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].String() < roots[j].String() })
	var keys []objects.Key
	for i, nn := range roots {
		if i%2 == 1 {
			continue
		}
		p := snap.HTTPProxies[nn].DeepCopy()
		p.Spec.VirtualHost.TLS.EnableFallbackCertificate = true
		k, _ := snap.Upsert(p)
		keys = append(keys, k)
	}
	return keys
}

// TestFallbackFollowsItsHosts: the fallback route configuration and chain
// belong to every host that uses them, so each host that comes, changes or
// goes must rebuild them as a full build would, and the last one going
// must take both away.
func TestFallbackFollowsItsHosts(t *testing.T) {
	snap := objects.NewSnapshot()
	// A generated set's certificate, as a Secret of namespace shop.
	secret := testSet(t, 0).Snapshot().Secrets[fallbackCertificate].DeepCopy()
	secret.Namespace, secret.Name, secret.ResourceVersion = "shop", "tls", ""
	cfg := Config{Translator: translator.DefaultOptions()}
	cfg.DAG.FallbackCertificate = &types.NamespacedName{Namespace: "shop", Name: "tls"}
	e := New(snap, cfg)
	secure := func(name, fqdn string, fallback bool, prefix string) *switchyardv1.HTTPProxy {
		p := rootProxy(name, fqdn)
		p.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: "tls", EnableFallbackCertificate: fallback}
		p.Spec.Routes[0].Conditions = []switchyardv1.MatchCondition{{Prefix: prefix}}
		return p
	}
	step := func(when string, wantHosts int, objs ...any) {
		t.Helper()
		var keys []objects.Key
		for _, o := range objs {
			switch o := o.(type) {
			case objects.Key:
				snap.Delete(o)
				keys = append(keys, o)
			case runtime.Object:
				k, err := snap.Upsert(o)
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k)
			}
		}
		if _, err := e.Update(Changes{Objects: keys}); err != nil {
			t.Fatal(err)
		}
		compare(t, e, snap, cfg, when)
		envoy := e.Targets(xdsres.GroupEnvoy)
		rc, _ := decoded[*envoy_config_route_v3.RouteConfiguration](envoy[resource.RouteType].Get(translator.FallbackRouteName))
		if got := len(rc.GetVirtualHosts()); got != wantHosts {
			t.Errorf("%s: the fallback route configuration has %d virtual hosts, want %d", when, got, wantHosts)
		}
		if owners := e.Owners(xdsres.GroupEnvoy, resource.RouteType, translator.FallbackRouteName); len(owners) != wantHosts {
			t.Errorf("%s: the fallback route configuration is owned by %v, want its %d hosts' roots", when, owners, wantHosts)
		}
		l, _ := decoded[*envoy_config_listener_v3.Listener](envoy[resource.ListenerType].Get(translator.HTTPSListenerName))
		chains := l.GetFilterChains()
		hasChain := len(chains) > 0 && chains[len(chains)-1].GetName() == translator.FallbackChainName
		if hasChain != (wantHosts > 0) {
			t.Errorf("%s: fallback chain on the listener: %v, want %v", when, hasChain, wantHosts > 0)
		}
	}
	a := objects.NewKey(objects.KindHTTPProxy, types.NamespacedName{Namespace: "shop", Name: "a"})
	b := objects.NewKey(objects.KindHTTPProxy, types.NamespacedName{Namespace: "shop", Name: "b"})
	step("a host uses the fallback", 1, secret, secure("a", "a.example.com", true, "/"))
	step("a second host", 2, secure("b", "b.example.com", true, "/"))
	step("a host elsewhere, without it", 2, secure("c", "c.example.com", false, "/"))
	step("a host's routes change", 2, secure("a", "a.example.com", true, "/x"))
	step("a host stops using it", 1, secure("a", "a.example.com", false, "/x"))
	step("the last host goes", 0, b)
	step("it comes back", 1, secure("b", "b.example.com", true, "/"))
	step("the certificate goes: the host is invalid", 0, objects.NewKey(objects.KindSecret, types.NamespacedName{Namespace: "shop", Name: "tls"}))
	step("and comes back", 1, secret)
	step("the hosts go", 0, a, b)
}

func decoded[T proto.Message](r *xdsres.Resource) (T, bool) {
	var zero T
	if r == nil {
		return zero, false
	}
	m, ok := r.Decoded().(T)
	return m, ok
}
