package incremental

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

func rootProxy(name, fqdn string) *switchyardv1.HTTPProxy {
	return &switchyardv1.HTTPProxy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "switchyard.dev/v1", Kind: "HTTPProxy"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec: switchyardv1.HTTPProxySpec{
			VirtualHost: &switchyardv1.VirtualHost{Fqdn: fqdn},
			Routes:      []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: "web", Port: 80}}}},
		},
	}
}

// TestWildcardTablesFollowChanges: the plain-HTTP listener lists wildcard
// domains and the exact hosts next to them, so adding or removing either
// must republish it as a full build would, and a host elsewhere must not.
func TestWildcardTablesFollowChanges(t *testing.T) {
	snap := objects.NewSnapshot()
	cfg := Config{Translator: translator.DefaultOptions()}
	e := New(snap, cfg)
	var keys []objects.Key
	step := func(when string, upsert *switchyardv1.HTTPProxy, remove *objects.Key) {
		t.Helper()
		keys = keys[:0]
		if upsert != nil {
			k, err := snap.Upsert(upsert)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		if remove != nil {
			snap.Delete(*remove)
			keys = append(keys, *remove)
		}
		if _, err := e.Update(Changes{Objects: keys}); err != nil {
			t.Fatal(err)
		}
		compare(t, e, snap, cfg, when)
	}
	step("a plain host", rootProxy("plain", "shop.example.org"), nil)
	step("a wildcard", rootProxy("wild", "*.example.com"), nil)
	step("an exact host next to it", rootProxy("api", "api.example.com"), nil)
	step("a host elsewhere", rootProxy("other", "a.b.example.com"), nil)
	api := objects.NewKey(objects.KindHTTPProxy, types.NamespacedName{Namespace: "shop", Name: "api"})
	step("the exact host goes", nil, &api)
	wild := objects.NewKey(objects.KindHTTPProxy, types.NamespacedName{Namespace: "shop", Name: "wild"})
	step("the wildcard goes", nil, &wild)
}
