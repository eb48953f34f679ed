package dag

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

func target(name string, port int32, weight int64) switchyardv1alpha1.ExtensionServiceTarget {
	return switchyardv1alpha1.ExtensionServiceTarget{Name: name, Port: port, Weight: &weight}
}

func TestExtensionService(t *testing.T) {
	external := service("auth/external", 9001)
	external.Spec.Type = corev1.ServiceTypeExternalName
	withCA := func(ext *switchyardv1alpha1.ExtensionService, ca string) *switchyardv1alpha1.ExtensionService {
		ext.Spec.UpstreamValidation = &switchyardv1.UpstreamValidation{CACertificate: ca, SubjectName: "authz.auth"}
		return ext
	}
	cases := []struct {
		name string
		objs []runtime.Object
		err  string
		// weights of the targets in backend order, when valid
		weights []uint32
	}{
		{"two weighted targets", []runtime.Object{extension("auth/authz", target("a", 9001, 75), target("b", 9001, 25)), service("auth/a", 9001), service("auth/b", 9001)}, "", []uint32{75, 25}},
		{"missing service", []runtime.Object{extension("auth/authz", target("a", 9001, 1)), service("auth/b", 9001)}, "spec.services[0]: Service auth/a not found", nil},
		{"ExternalName service", []runtime.Object{extension("auth/authz", target("external", 9001, 1)), external}, "is of type ExternalName", nil},
		{"unknown port", []runtime.Object{extension("auth/authz", target("a", 9002, 1)), service("auth/a", 9001)}, "has no TCP port 9002 (it has 9001/tcp)", nil},
		{"weights sum to zero", []runtime.Object{extension("auth/authz", target("a", 9001, 0), target("b", 9001, 0)), service("auth/a", 9001), service("auth/b", 9001)}, "the weights of priority 0 sum to 0", nil},
		{"missing CA secret", []runtime.Object{withCA(extension("auth/authz", target("a", 9001, 1)), "ca"), service("auth/a", 9001)}, "spec.validation.caSecret: Secret auth/ca not found", nil},
		{"CA secret without a certificate", []runtime.Object{withCA(extension("auth/authz", target("a", 9001, 1)), "ca"), service("auth/a", 9001), tlsSecret("auth/ca")}, "ca.crt is missing", nil},
		{"valid CA", []runtime.Object{withCA(extension("auth/authz", target("a", 9001, 1)), "ca"), service("auth/a", 9001), caSecret("auth/ca")}, "", []uint32{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := build(t, tc.objs...)
			st := statusOf(t, res, objects.KindExtensionService, "auth/authz")
			msgs := strings.Join(errorMessages(st), "\n")
			if tc.err != "" {
				if st.State != switchyardv1.StatusInvalid || !strings.Contains(msgs, tc.err) {
					t.Fatalf("state %s, errors %q, want %q", st.State, msgs, tc.err)
				}
				return
			}
			if msgs != "" {
				t.Fatalf("unexpected errors %q", msgs)
			}
			if len(res.DAG.DNSNames) != 1 || res.DAG.DNSNames[0].Name != "authz.auth" {
				t.Fatalf("dns names %+v", res.DAG.DNSNames)
			}
			spec := res.DAG.DNSNames[0].Cluster.Spec
			var got []uint32
			for _, b := range spec.Backends {
				got = append(got, b.Weight)
			}
			if diff := cmp.Diff(tc.weights, got); diff != "" || spec.Protocol != "h2" {
				t.Fatalf("weights (-want +got):\n%s protocol %q", diff, spec.Protocol)
			}
		})
	}
}

// authRoot is a secure root proxy whose host is authorized by ref.
func authRoot(nsName string, ref *switchyardv1.ExtensionServiceReference, routes ...switchyardv1.Route) *switchyardv1.HTTPProxy {
	p := root(nsName, "admin.example.com", routes...)
	p.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: "cert"}
	p.Spec.VirtualHost.Authorization = &switchyardv1.AuthorizationServer{
		ExtensionServiceRef: ref, ResponseTimeout: "500ms",
		AuthPolicy: &switchyardv1.AuthorizationPolicy{Context: map[string]string{"app": "admin", "tier": "web"}},
	}
	return p
}

func TestAuthorization(t *testing.T) {
	open := route(svc("health", 80))
	open.Conditions = []switchyardv1.MatchCondition{{Prefix: "/healthz"}}
	open.AuthPolicy = &switchyardv1.AuthorizationPolicy{Disabled: true}
	checked := route(svc("console", 80))
	checked.AuthPolicy = &switchyardv1.AuthorizationPolicy{Context: map[string]string{"tier": "api"}}
	checked.PermitInsecure = true
	base := func() []runtime.Object {
		return []runtime.Object{tlsSecret("admin/cert"), service("admin/console", 80), service("admin/health", 80), service("auth/authz", 9001)}
	}
	ref := &switchyardv1.ExtensionServiceReference{Namespace: "auth", Name: "authz"}

	t.Run("configured", func(t *testing.T) {
		ext := extension("auth/authz", target("authz", 9001, 1))
		ext.Spec.AllowedNamespaces = []string{"admin"}
		res := build(t, append(base(), ext, authRoot("admin/admin", ref, open, checked))...)
		svh := res.DAG.SecureVirtualHosts[0]
		if svh.Authorization == nil || svh.Authorization.ResponseTimeout != 500*time.Millisecond || svh.Authorization.FailOpen {
			t.Fatalf("authorization = %+v", svh.Authorization)
		}
		byPath := map[string]*Route{}
		for _, r := range svh.Routes {
			byPath[r.PathMatch.Value] = r
		}
		if r := byPath["/healthz"]; !r.AuthDisabled || r.AuthContext != nil {
			t.Fatalf("/healthz opts out: %+v", r)
		}
		if diff := cmp.Diff(map[string]string{"app": "admin", "tier": "api"}, byPath["/"].AuthContext); diff != "" {
			t.Fatalf("route context merges over the host's (-want +got):\n%s", diff)
		}
		for _, r := range res.DAG.VirtualHosts[0].Routes {
			if r.PathMatch.Value == "/" && !r.HTTPSRedirect {
				t.Fatal("permitInsecure must not serve an authorized route over plain HTTP: that would skip the check")
			}
		}
		for _, n := range res.DAG.DNSNames {
			if n.Cluster.Spec.Backends[0].Service.Name == "console" {
				t.Fatalf("a route behind authorization must get no DNS name, got %s", n.Name)
			}
		}
	})
	t.Run("cross-namespace reference without consent fails closed", func(t *testing.T) {
		res := build(t, append(base(), extension("auth/authz", target("authz", 9001, 1)), authRoot("admin/admin", ref, open, checked))...)
		msgs := strings.Join(errorMessages(statusOf(t, res, objects.KindHTTPProxy, "admin/admin")), "\n")
		if !strings.Contains(msgs, `does not allow references from namespace "admin"`) {
			t.Fatalf("errors %q", msgs)
		}
		assertFailsClosed(t, res)
	})
	t.Run("invalid extension fails closed", func(t *testing.T) {
		ext := extension("admin/authz", target("missing", 9001, 1))
		res := build(t, append(base(), ext, authRoot("admin/admin", &switchyardv1.ExtensionServiceReference{Name: "authz"}, open, checked))...)
		msgs := strings.Join(errorMessages(statusOf(t, res, objects.KindHTTPProxy, "admin/admin")), "\n")
		if !strings.Contains(msgs, "ExtensionService admin/authz is invalid") {
			t.Fatalf("errors %q", msgs)
		}
		assertFailsClosed(t, res)
	})
	t.Run("global authorization", func(t *testing.T) {
		p := root("admin/admin", "admin.example.com", checked)
		p.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: "cert"}
		optOut := root("admin/public", "public.example.com", route(svc("console", 80)))
		optOut.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: "cert"}
		optOut.Spec.VirtualHost.Authorization = &switchyardv1.AuthorizationServer{AuthPolicy: &switchyardv1.AuthorizationPolicy{Disabled: true}}
		objs := append(base(), extension("auth/authz", target("authz", 9001, 1)), p, optOut)
		res := Build(snapshot(t, objs...), Options{GlobalAuthorization: &types.NamespacedName{Namespace: "auth", Name: "authz"}})
		got := map[string]bool{}
		for _, svh := range res.DAG.SecureVirtualHosts {
			got[svh.FQDN] = svh.Authorization != nil
		}
		if diff := cmp.Diff(map[string]bool{"admin.example.com": true, "public.example.com": false}, got); diff != "" {
			t.Fatalf("global authorization applies unless a host opts out (-want +got):\n%s", diff)
		}
	})
	t.Run("global authorization does not apply to a TCP proxy", func(t *testing.T) {
		p := root("admin/mqtt", "mqtt.example.com")
		p.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: "cert"}
		p.Spec.TCPProxy = &switchyardv1.TCPProxy{Services: []switchyardv1.Service{svc("console", 80)}}
		res := Build(snapshot(t, append(base(), p)...), Options{GlobalAuthorization: &types.NamespacedName{Namespace: "auth", Name: "missing"}})
		if st := statusOf(t, res, objects.KindHTTPProxy, "admin/mqtt"); st.State != switchyardv1.StatusValid {
			t.Fatalf("a TCP proxy has no requests to check, yet: %s", st.Description)
		}
		if svh := res.DAG.SecureVirtualHosts; len(svh) != 1 || svh[0].TCPProxy == nil || svh[0].Authorization != nil {
			t.Fatalf("secure hosts %+v", svh)
		}
	})
}

// assertFailsClosed checks that the authorized host's routes that need a
// check answer an error and only the opted-out route forwards.
func assertFailsClosed(t *testing.T, res *Result) {
	t.Helper()
	if len(res.DAG.SecureVirtualHosts) != 1 {
		t.Fatalf("the host should still be served, refusing requests: %d secure hosts", len(res.DAG.SecureVirtualHosts))
	}
	for _, r := range res.DAG.SecureVirtualHosts[0].Routes {
		switch {
		case r.AuthDisabled && r.Forward == nil:
			t.Errorf("%s opts out of authorization and should still forward", r.PathMatch.Value)
		case !r.AuthDisabled && (r.Forward != nil || r.DirectResponse == nil || r.DirectResponse.StatusCode != 503):
			t.Errorf("%s must answer 503 while authorization is unavailable, got %+v", r.PathMatch.Value, r)
		}
	}
}

// TestAuthorizationNeedsHTTPS checks that an extensionRef on a host that
// cannot run ext_authz (no TLS, TLS passthrough, or a TCP proxy) makes the
// root invalid instead of serving it unchecked. The CRD's CEL rule catches
// the first case in Kubernetes, but not in a directory source.
func TestAuthorizationNeedsHTTPS(t *testing.T) {
	ref := &switchyardv1.ExtensionServiceReference{Name: "authz"}
	cases := map[string]struct {
		tls *switchyardv1.TLS
		tcp bool
		err string
	}{
		"no TLS":          {nil, false, "spec.virtualhost.authorization: requires spec.virtualhost.tls"},
		"TLS passthrough": {&switchyardv1.TLS{Passthrough: true}, true, "spec.virtualhost.authorization: cannot be used with spec.virtualhost.tls.passthrough"},
		"TCP proxy":       {&switchyardv1.TLS{SecretName: "cert"}, true, "spec.virtualhost.authorization: cannot be used with spec.tcpproxy"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := root("admin/admin", "admin.example.com", route(svc("console", 80)))
			p.Spec.VirtualHost.TLS = tc.tls
			p.Spec.VirtualHost.Authorization = &switchyardv1.AuthorizationServer{ExtensionServiceRef: ref}
			if tc.tcp {
				p.Spec.TCPProxy = &switchyardv1.TCPProxy{Services: []switchyardv1.Service{svc("console", 80)}}
			}
			res := build(t, tlsSecret("admin/cert"), service("admin/console", 80), service("admin/authz", 9001),
				extension("admin/authz", target("authz", 9001, 1)), p)
			st := statusOf(t, res, objects.KindHTTPProxy, "admin/admin")
			if msgs := strings.Join(errorMessages(st), "\n"); st.State != switchyardv1.StatusInvalid || !strings.Contains(msgs, tc.err) {
				t.Fatalf("state %s, errors %q, want %q", st.State, msgs, tc.err)
			}
			if n := len(res.DAG.VirtualHosts) + len(res.DAG.SecureVirtualHosts); n != 0 {
				t.Fatalf("the host must not be served without its authorization: %d virtual hosts", n)
			}
			for _, d := range res.DAG.DNSNames {
				if d.Cluster.Spec.Backends[0].Service.Name == "console" {
					t.Fatalf("DNS name %s reaches the backend without authorization", d.Name)
				}
			}
		})
	}
}
