package k8ssource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

func TestSecretsOf(t *testing.T) {
	ca := func(ref string) *switchyardv1.UpstreamValidation {
		return &switchyardv1.UpstreamValidation{CACertificate: ref, SubjectName: "x"}
	}
	om := metav1.ObjectMeta{Namespace: "shop", Name: "x"}
	for _, tc := range []struct {
		name string
		obj  runtime.Object
		want []types.NamespacedName
	}{{
		name: "proxy: certificate, client CA, route and tcpproxy CAs, deduplicated",
		obj: &switchyardv1.HTTPProxy{ObjectMeta: om, Spec: switchyardv1.HTTPProxySpec{
			VirtualHost: &switchyardv1.VirtualHost{Fqdn: "a", TLS: &switchyardv1.TLS{
				SecretName:       "certs/wildcard",
				ClientValidation: &switchyardv1.DownstreamValidation{CACertificate: "client-ca"},
			}},
			Routes: []switchyardv1.Route{{Services: []switchyardv1.Service{
				{Name: "a", UpstreamValidation: ca("upstream-ca")},
				{Name: "b", UpstreamValidation: ca("upstream-ca")},
				{Name: "c"},
			}}},
			TCPProxy: &switchyardv1.TCPProxy{Services: []switchyardv1.Service{{Name: "d", UpstreamValidation: ca("other/tcp-ca")}}},
		}},
		want: []types.NamespacedName{{Namespace: "certs", Name: "wildcard"}, {Namespace: "shop", Name: "client-ca"}, {Namespace: "shop", Name: "upstream-ca"}, {Namespace: "other", Name: "tcp-ca"}},
	}, {
		name: "malformed references are the build's to report",
		obj: &switchyardv1.HTTPProxy{ObjectMeta: om, Spec: switchyardv1.HTTPProxySpec{
			VirtualHost: &switchyardv1.VirtualHost{Fqdn: "a", TLS: &switchyardv1.TLS{SecretName: "a/b/c"}},
			Routes:      []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: "a", UpstreamValidation: ca("/x")}}}},
		}},
	}, {
		name: "extension service CA",
		obj:  &switchyardv1alpha1.ExtensionService{ObjectMeta: om, Spec: switchyardv1alpha1.ExtensionServiceSpec{UpstreamValidation: ca("authz-ca")}},
		want: []types.NamespacedName{{Namespace: "shop", Name: "authz-ca"}},
	}, {
		name: "delegated secrets, in the delegation's namespace",
		obj: &switchyardv1.TLSCertificateDelegation{ObjectMeta: om, Spec: switchyardv1.TLSCertificateDelegationSpec{Delegations: []switchyardv1.CertificateDelegation{
			{SecretName: "wildcard", TargetNamespaces: []string{"*"}},
			{SecretName: "elsewhere/x", TargetNamespaces: []string{"*"}},
		}}},
		want: []types.NamespacedName{{Namespace: "shop", Name: "wildcard"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, secretsOf(tc.obj)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretRefsCount(t *testing.T) {
	r := newSecretRefs()
	a, b := objects.Key{Kind: objects.KindHTTPProxy, Name: "a"}, objects.Key{Kind: objects.KindHTTPProxy, Name: "b"}
	s := types.NamespacedName{Namespace: "ns", Name: "cert"}
	if got := r.set(a, []types.NamespacedName{s}); len(got) != 1 || !r.referenced(s) {
		t.Fatalf("first reference: flipped %v", got)
	}
	if got := r.set(b, []types.NamespacedName{s}); len(got) != 0 {
		t.Fatalf("second reference flipped %v", got)
	}
	if got := r.set(a, nil); len(got) != 0 || !r.referenced(s) {
		t.Fatalf("one of two references gone: flipped %v", got)
	}
	if got := r.set(b, nil); len(got) != 1 || r.referenced(s) {
		t.Fatalf("last reference gone: flipped %v", got)
	}
}

// TestSecretRefsPinned: a Secret the configuration names (the fallback
// certificate) is referenced with no object naming it, and stays so when
// the objects that did name it go.
func TestSecretRefsPinned(t *testing.T) {
	s := types.NamespacedName{Namespace: "ops", Name: "fallback"}
	r := newSecretRefs(s)
	if !r.referenced(s) {
		t.Fatal("a pinned Secret must be referenced from the start")
	}
	a := objects.Key{Kind: objects.KindHTTPProxy, Name: "a"}
	r.set(a, []types.NamespacedName{s})
	r.set(a, nil)
	if !r.referenced(s) {
		t.Fatal("a pinned Secret must stay referenced when its last referrer goes")
	}
	if r.referenced(types.NamespacedName{Namespace: "ops", Name: "other"}) {
		t.Fatal("only the pinned Secret is referenced")
	}
}
