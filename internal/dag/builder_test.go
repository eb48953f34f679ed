package dag

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

func build(t *testing.T, objs ...runtime.Object) *Result {
	t.Helper()
	return Build(snapshot(t, objs...), Options{})
}

func TestSingleServiceRoute(t *testing.T) {
	res := build(t, root("web", "web.example.com", route(svc("app", 80))), service("app", 80))
	st := statusOf(t, res, objects.KindHTTPProxy, "web")
	if st.State != switchyardv1.StatusValid {
		t.Fatalf("state = %s, errors %v", st.State, errorMessages(st))
	}
	if len(res.DAG.VirtualHosts) != 1 || len(res.DAG.SecureVirtualHosts) != 0 {
		t.Fatalf("want one plain vhost, got %d plain %d secure", len(res.DAG.VirtualHosts), len(res.DAG.SecureVirtualHosts))
	}
	vh := res.DAG.VirtualHosts[0]
	if vh.FQDN != "web.example.com" || len(vh.Routes) != 1 {
		t.Fatalf("vhost = %+v", vh)
	}
	r := vh.Routes[0]
	want := []Backend{{Service: types.NamespacedName{Namespace: "default", Name: "app"}, Port: 80, Weight: 1}}
	if diff := cmp.Diff(want, r.Forward.Cluster.Spec.Backends); diff != "" {
		t.Fatalf("backends (-want +got):\n%s", diff)
	}
	if r.PathMatch != (PathMatch{Kind: PathPrefix, Value: "/"}) {
		t.Fatalf("path match = %+v", r.PathMatch)
	}
	if !strings.HasPrefix(r.Forward.Cluster.Name, "default/app/80/") || len(r.Forward.Cluster.Name) > maxClusterNameLen {
		t.Fatalf("cluster name = %q", r.Forward.Cluster.Name)
	}
	if r.Forward.Merged != r.Forward.Cluster {
		t.Fatal("merged cluster should be the route's cluster")
	}
}

func TestWeightsAndPriorities(t *testing.T) {
	svcs := []runtime.Object{service("a", 80), service("b", 80), service("c", 80)}
	cases := []struct {
		name     string
		services []switchyardv1.Service
		want     []uint32 // weights of a, b, c in backend order; nil when the route must answer 503
		err      string
	}{
		{"unset weights split equally", []switchyardv1.Service{svc("a", 80), svc("b", 80), svc("c", 80)}, []uint32{1, 1, 1}, ""},
		{"explicit weights", []switchyardv1.Service{weighted("a", 80, 60), weighted("b", 80, 30), weighted("c", 80, 10)}, []uint32{60, 30, 10}, ""},
		{"unset weight is 0 once one is set", []switchyardv1.Service{weighted("a", 80, 5), svc("b", 80)}, []uint32{5}, ""},
		{"all weights zero", []switchyardv1.Service{weighted("a", 80, 0), weighted("b", 80, 0)}, nil, "the weights of priority 0 sum to 0"},
		{"sum overflows uint32", []switchyardv1.Service{weighted("a", 80, 4294967295), weighted("b", 80, 1)}, nil, "sum to 4294967296, over the limit"},
		{"priority gap", []switchyardv1.Service{svc("a", 80), {Name: "b", Port: 80, Priority: ptr[int32](2)}}, nil, "priority 1 is missing (used: 0 2)"},
		{"same service at two priorities", []switchyardv1.Service{svc("a", 80), {Name: "a", Port: 80, Priority: ptr[int32](1)}}, nil, "is listed at priorities 0 and 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := build(t, append(svcs, root("web", "web.example.com", route(tc.services...)))...)
			r := res.DAG.VirtualHosts[0].Routes[0]
			st := statusOf(t, res, objects.KindHTTPProxy, "web")
			if tc.want == nil {
				if r.DirectResponse == nil || r.DirectResponse.StatusCode != 503 {
					t.Fatalf("route should answer 503, got %+v", r)
				}
				if !strings.Contains(strings.Join(errorMessages(st), "\n"), tc.err) {
					t.Fatalf("errors %q do not mention %q", errorMessages(st), tc.err)
				}
				return
			}
			if len(st.Errors) > 0 {
				t.Fatalf("unexpected errors %v", errorMessages(st))
			}
			var got []uint32
			for _, b := range r.Forward.Cluster.Spec.Backends {
				got = append(got, b.Weight)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("weights (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrioritiesMergeIntoOneCluster(t *testing.T) {
	res := build(t, service("primary", 80), service("standby", 80),
		root("web", "web.example.com", route(svc("primary", 80), switchyardv1.Service{Name: "standby", Port: 80, Priority: ptr[int32](1)})))
	spec := res.DAG.VirtualHosts[0].Routes[0].Forward.Cluster.Spec
	if len(spec.Backends) != 2 || spec.Backends[0].Priority != 0 || spec.Backends[1].Priority != 1 || spec.Backends[1].Service.Name != "standby" {
		t.Fatalf("backends = %+v", spec.Backends)
	}
}

func TestReferenceErrorsLeaveServiceOut(t *testing.T) {
	res := build(t, service("stable", 80), service("other", 8080),
		root("web", "web.example.com", route(weighted("stable", 80, 90), weighted("canary", 80, 10), weighted("other", 80, 5))))
	st := statusOf(t, res, objects.KindHTTPProxy, "web")
	msgs := strings.Join(errorMessages(st), "\n")
	for _, want := range []string{
		"spec.routes[0].services[1]: Service default/canary not found",
		"spec.routes[0].services[2]: Service default/other has no TCP port 80 (it has 8080/tcp)",
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("errors %q do not contain %q", msgs, want)
		}
	}
	if st.State != switchyardv1.StatusInvalid {
		t.Errorf("state = %s", st.State)
	}
	b := res.DAG.VirtualHosts[0].Routes[0].Forward.Cluster.Spec.Backends
	if len(b) != 1 || b[0].Service.Name != "stable" {
		t.Fatalf("the route should keep forwarding to the stable service only, got %+v", b)
	}
}

func TestMirror(t *testing.T) {
	res := build(t, service("app", 80), service("shadow", 80),
		root("web", "web.example.com", route(svc("app", 80), switchyardv1.Service{Name: "shadow", Port: 80, Mirror: true})))
	st := statusOf(t, res, objects.KindHTTPProxy, "web")
	if !strings.Contains(strings.Join(errorMessages(st), ""), "a mirror must set weight") {
		t.Fatalf("mirror without weight must be rejected, got %v", errorMessages(st))
	}
	res = build(t, service("app", 80), service("shadow", 80),
		root("web", "web.example.com", route(svc("app", 80), switchyardv1.Service{Name: "shadow", Port: 80, Mirror: true, Weight: ptr[int64](25)})))
	fwd := res.DAG.VirtualHosts[0].Routes[0].Forward
	if len(fwd.Mirrors) != 1 || fwd.Mirrors[0].Percent != 25 || fwd.Mirrors[0].Cluster.Spec.Backends[0].Service.Name != "shadow" {
		t.Fatalf("mirrors = %+v", fwd.Mirrors)
	}
	if b := fwd.Cluster.Spec.Backends; len(b) != 1 || b[0].Service.Name != "app" || b[0].Weight != 1 {
		t.Fatalf("main backends = %+v", b)
	}
}

func TestPerServiceHeadersSplitAtRouteLevel(t *testing.T) {
	a := weighted("a", 80, 3)
	a.RequestHeadersPolicy = &switchyardv1.HeadersPolicy{Set: []switchyardv1.HeaderValue{{Name: "X-Version", Value: "a"}, {Name: "Host", Value: "a.internal"}}}
	res := build(t, service("a", 80), service("b", 80), root("web", "web.example.com", route(a, weighted("b", 80, 1))))
	fwd := res.DAG.VirtualHosts[0].Routes[0].Forward
	if fwd.Cluster != nil || len(fwd.Weighted) != 2 {
		t.Fatalf("want weighted clusters, got %+v", fwd)
	}
	w := fwd.Weighted[0]
	if w.Weight != 3 || w.HostRewrite != "a.internal" || w.RequestHeaders.Set[0] != (HeaderValue{Name: "x-version", Value: "a"}) {
		t.Fatalf("weighted[0] = %+v", w)
	}
	if len(fwd.Merged.Spec.Backends) != 2 {
		t.Fatalf("merged (DNS) cluster should hold both services, got %+v", fwd.Merged.Spec.Backends)
	}
}

func TestClusterIdentity(t *testing.T) {
	rr := route(svc("app", 80))
	random := route(svc("app", 80))
	random.LoadBalancerPolicy = &switchyardv1.LoadBalancerPolicy{Strategy: switchyardv1.Random}
	res := build(t, service("app", 80),
		root("a", "a.example.com", rr), root("b", "b.example.com", rr), root("c", "c.example.com", random))
	a := res.DAG.VirtualHosts[0].Routes[0].Forward.Cluster
	b := res.DAG.VirtualHosts[1].Routes[0].Forward.Cluster
	c := res.DAG.VirtualHosts[2].Routes[0].Forward.Cluster
	if a.Name != b.Name {
		t.Fatalf("equal backend sets must share a cluster: %s vs %s", a.Name, b.Name)
	}
	if a.Name == c.Name {
		t.Fatal("a different load-balancing policy must make a different cluster")
	}
	if len(res.DAG.Clusters) != 2 {
		t.Fatalf("want 2 clusters, got %d", len(res.DAG.Clusters))
	}
}

func TestClusterNameLength(t *testing.T) {
	long := strings.Repeat("n", 63)
	res := build(t, service(long+"/"+long, 80), root(long+"/web", "web.example.com", route(svc(long, 80))))
	name := res.DAG.VirtualHosts[0].Routes[0].Forward.Cluster.Name
	if len(name) != maxClusterNameLen {
		t.Fatalf("name %q has %d characters, want %d", name, len(name), maxClusterNameLen)
	}
}

func TestIncludes(t *testing.T) {
	rootProxy := proxy("infra/root", switchyardv1.HTTPProxySpec{
		VirtualHost: &switchyardv1.VirtualHost{Fqdn: "shop.example.com"},
		Routes:      []switchyardv1.Route{route(svc("home", 80))},
		Includes: []switchyardv1.Include{{Name: "cart", Namespace: "team", Conditions: []switchyardv1.MatchCondition{{Prefix: "/cart"}}},
			{Name: "missing", Namespace: "team"}},
	})
	child := proxy("team/cart", switchyardv1.HTTPProxySpec{Routes: []switchyardv1.Route{prefixRoute("/", svc("cart", 80)), prefixRoute("/v2", svc("cart", 80))}})
	orphan := proxy("team/orphan", switchyardv1.HTTPProxySpec{Routes: []switchyardv1.Route{route(svc("cart", 80))}})
	res := build(t, rootProxy, child, orphan, service("infra/home", 80), service("team/cart", 80))

	var paths []string
	for _, r := range res.DAG.VirtualHosts[0].Routes {
		paths = append(paths, r.PathMatch.Value)
	}
	if diff := cmp.Diff([]string{"/cart/v2", "/cart", "/"}, paths); diff != "" {
		t.Fatalf("route paths (-want +got):\n%s", diff)
	}
	if st := statusOf(t, res, objects.KindHTTPProxy, "team/cart"); st.State != switchyardv1.StatusValid {
		t.Fatalf("included proxy: %s %v", st.State, errorMessages(st))
	}
	if st := statusOf(t, res, objects.KindHTTPProxy, "team/orphan"); st.State != switchyardv1.StatusOrphaned {
		t.Fatalf("orphan: %s", st.State)
	}
	st := statusOf(t, res, objects.KindHTTPProxy, "infra/root")
	if diff := cmp.Diff([]string{"spec.includes[1]: HTTPProxy team/missing not found"}, errorMessages(st)); diff != "" {
		t.Fatalf("root errors (-want +got):\n%s", diff)
	}
}

func TestIncludeCycleAndDepth(t *testing.T) {
	inc := func(name string) []switchyardv1.Include { return []switchyardv1.Include{{Name: name}} }
	a := proxy("a", switchyardv1.HTTPProxySpec{Includes: inc("b"), Routes: []switchyardv1.Route{prefixRoute("/a", svc("s", 80))}})
	b := proxy("b", switchyardv1.HTTPProxySpec{Includes: inc("a"), Routes: []switchyardv1.Route{prefixRoute("/b", svc("s", 80))}})
	r := proxy("root", switchyardv1.HTTPProxySpec{VirtualHost: &switchyardv1.VirtualHost{Fqdn: "x.example.com"}, Includes: inc("a")})
	res := build(t, r, a, b, service("s", 80))
	msgs := errorMessages(statusOf(t, res, objects.KindHTTPProxy, "b"))
	want := "spec.includes[0]: including HTTPProxy default/a creates a cycle: default/root -> default/a -> default/b -> default/a"
	if diff := cmp.Diff([]string{want}, msgs); diff != "" {
		t.Fatalf("cycle error (-want +got):\n%s", diff)
	}
	if n := len(res.DAG.VirtualHosts[0].Routes); n != 2 {
		t.Fatalf("routes outside the cycle must still be served, got %d", n)
	}

	var chain []runtime.Object
	for i := 0; i < 12; i++ {
		spec := switchyardv1.HTTPProxySpec{Includes: inc(string(rune('a' + i + 1)))}
		if i == 0 {
			spec.VirtualHost = &switchyardv1.VirtualHost{Fqdn: "deep.example.com"}
		}
		chain = append(chain, proxy(string(rune('a'+i)), spec))
	}
	res = build(t, chain...)
	found := false
	for _, st := range res.Statuses {
		for _, m := range errorMessages(st) {
			found = found || strings.Contains(m, "deeper than the limit of 8")
		}
	}
	if !found {
		t.Fatal("a 12-deep include chain must be rejected")
	}
}

func TestDuplicateFQDNOldestWins(t *testing.T) {
	older := root("team-a/web", "web.example.com", route(svc("app", 80)))
	older.CreationTimestamp = metav1.NewTime(time.Unix(100, 0))
	newer := root("team-b/web", "web.example.com", route(svc("app", 80)))
	newer.CreationTimestamp = metav1.NewTime(time.Unix(200, 0))
	res := build(t, older, newer, service("team-a/app", 80), service("team-b/app", 80))
	if st := statusOf(t, res, objects.KindHTTPProxy, "team-a/web"); st.State != switchyardv1.StatusValid {
		t.Fatalf("older proxy must keep the host: %v", errorMessages(st))
	}
	st := statusOf(t, res, objects.KindHTTPProxy, "team-b/web")
	want := []string{`spec.virtualhost.fqdn: "web.example.com" is already served by HTTPProxy team-a/web`}
	if diff := cmp.Diff(want, errorMessages(st)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got := res.DAG.VirtualHosts[0].Routes[0].Forward.Cluster.Spec.Backends[0].Service.Namespace; got != "team-a" {
		t.Fatalf("host served by %s", got)
	}
}

func TestTLS(t *testing.T) {
	tlsRoot := func(nsName, secret string) *switchyardv1.HTTPProxy {
		p := root(nsName, "secure.example.com", route(svc("app", 80)), switchyardv1.Route{
			Conditions: []switchyardv1.MatchCondition{{Prefix: "/public"}}, Services: []switchyardv1.Service{svc("app", 80)}, PermitInsecure: true,
		})
		p.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: secret}
		return p
	}
	t.Run("same namespace", func(t *testing.T) {
		res := build(t, tlsRoot("web", "cert"), tlsSecret("cert"), service("app", 80))
		svh := res.DAG.SecureVirtualHosts[0]
		if svh.Secret.Name != "default/cert" || svh.MinTLSVersion != "1.2" || svh.MaxTLSVersion != "1.3" {
			t.Fatalf("secure vhost = %+v", svh)
		}
		plain := res.DAG.VirtualHosts[0].Routes
		if !plain[1].HTTPSRedirect || plain[1].Forward != nil {
			t.Fatalf("plain-HTTP copy of / must redirect to https: %+v", plain[1])
		}
		if plain[0].HTTPSRedirect || plain[0].Forward == nil {
			t.Fatalf("permitInsecure route must be served over plain HTTP: %+v", plain[0])
		}
	})
	t.Run("other namespace without delegation", func(t *testing.T) {
		res := build(t, tlsRoot("web", "certs/cert"), tlsSecret("certs/cert"), service("app", 80))
		if len(res.DAG.SecureVirtualHosts)+len(res.DAG.VirtualHosts) != 0 {
			t.Fatal("a host whose certificate is not delegated must not be served at all")
		}
		want := []string{`spec.virtualhost.tls.secretName: Secret certs/cert is not delegated to namespace "default": its owner must create a TLSCertificateDelegation`}
		if diff := cmp.Diff(want, errorMessages(statusOf(t, res, objects.KindHTTPProxy, "web"))); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	})
	t.Run("other namespace with delegation", func(t *testing.T) {
		res := build(t, tlsRoot("web", "certs/cert"), tlsSecret("certs/cert"), service("app", 80), delegation("certs/share", "cert", "default"))
		if len(res.DAG.SecureVirtualHosts) != 1 || res.DAG.SecureVirtualHosts[0].Secret.Name != "certs/cert" {
			t.Fatalf("delegated certificate must be served, statuses %+v", errorMessages(statusOf(t, res, objects.KindHTTPProxy, "web")))
		}
		if st := statusOf(t, res, objects.KindTLSCertificateDelegation, "certs/share"); st.State != switchyardv1.StatusValid {
			t.Fatalf("delegation status %s", st.State)
		}
	})
	t.Run("broken certificate", func(t *testing.T) {
		bad := tlsSecret("cert")
		bad.Data["tls.key"] = []byte("not a key")
		res := build(t, tlsRoot("web", "cert"), bad, service("app", 80))
		msgs := errorMessages(statusOf(t, res, objects.KindHTTPProxy, "web"))
		if len(msgs) != 1 || !strings.Contains(msgs[0], "does not hold a valid certificate and key") {
			t.Fatalf("errors = %v", msgs)
		}
	})
}

func TestTCPProxyPassthrough(t *testing.T) {
	p := proxy("db", switchyardv1.HTTPProxySpec{
		VirtualHost: &switchyardv1.VirtualHost{Fqdn: "db.example.com", TLS: &switchyardv1.TLS{Passthrough: true}},
		TCPProxy:    &switchyardv1.TCPProxy{Services: []switchyardv1.Service{svc("db", 5432)}},
	})
	res := build(t, p, service("db", 5432))
	svh := res.DAG.SecureVirtualHosts[0]
	if !svh.Passthrough || svh.TCPProxy == nil || svh.Secret != nil || len(res.DAG.VirtualHosts) != 0 {
		t.Fatalf("secure vhost = %+v, plain %d", svh, len(res.DAG.VirtualHosts))
	}
	if n := res.DAG.DNSNames; len(n) != 1 || n[0].Name != "db.default" || n[0].Cluster != svh.TCPProxy.Cluster {
		t.Fatalf("dns names = %+v", n)
	}
}

func TestConditions(t *testing.T) {
	cases := []struct {
		name  string
		conds []switchyardv1.MatchCondition
		err   string
	}{
		{"header exact", []switchyardv1.MatchCondition{{Header: &switchyardv1.HeaderMatchCondition{Name: "X-Canary", Exact: "1"}}}, ""},
		{"two paths", []switchyardv1.MatchCondition{{Prefix: "/a"}, {Exact: "/b"}}, "at most one of the conditions may be a path"},
		{"bad regex", []switchyardv1.MatchCondition{{Regex: "(unclosed"}}, "is not a valid RE2 regex"},
		{"regex too big", []switchyardv1.MatchCondition{{Regex: strings.Repeat("[a-z]{1,5}", 30)}}, "over Envoy's limit of 100"},
		{"header CRLF", []switchyardv1.MatchCondition{{Header: &switchyardv1.HeaderMatchCondition{Name: "X-A", Exact: "a\r\nX-Evil: 1"}}}, "control character"},
		{"header name with space", []switchyardv1.MatchCondition{{Header: &switchyardv1.HeaderMatchCondition{Name: "X A", Present: true}}}, "not allowed in a header name"},
		{"two header matchers", []switchyardv1.MatchCondition{{Header: &switchyardv1.HeaderMatchCondition{Name: "x", Exact: "a", Contains: "b"}}}, "found 2"},
		{"query prefix", []switchyardv1.MatchCondition{{QueryParameter: &switchyardv1.QueryParameterMatchCondition{Name: "v", Prefix: "2"}}}, ""},
		{"dot-dot prefix", []switchyardv1.MatchCondition{{Prefix: "/a/../admin"}}, `contains a ".." segment`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := route(svc("app", 80))
			r.Conditions = tc.conds
			res := build(t, root("web", "web.example.com", r), service("app", 80))
			msgs := strings.Join(errorMessages(statusOf(t, res, objects.KindHTTPProxy, "web")), "\n")
			if tc.err == "" && msgs != "" || !strings.Contains(msgs, tc.err) {
				t.Fatalf("errors %q, want %q", msgs, tc.err)
			}
			if tc.err != "" && len(res.DAG.VirtualHosts) != 0 {
				t.Fatal("a route whose conditions are invalid must not be served")
			}
		})
	}
}

func TestDuplicateConditions(t *testing.T) {
	res := build(t, service("a", 80), service("b", 80), root("web", "web.example.com", prefixRoute("/x", svc("a", 80)), prefixRoute("/x", svc("b", 80))))
	want := []string{"spec.routes[1].conditions: match the same requests as spec.routes[0] of HTTPProxy default/web"}
	if diff := cmp.Diff(want, errorMessages(statusOf(t, res, objects.KindHTTPProxy, "web"))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if n := len(res.DAG.VirtualHosts[0].Routes); n != 1 {
		t.Fatalf("routes = %d", n)
	}
}

func TestRoutePolicies(t *testing.T) {
	cases := []struct {
		name  string
		route func(*switchyardv1.Route)
		err   string
		check func(*testing.T, *Route)
	}{
		{"timeouts", func(r *switchyardv1.Route) {
			r.TimeoutPolicy = &switchyardv1.TimeoutPolicy{Response: "30s", Idle: "infinity"}
		}, "", func(t *testing.T, r *Route) {
			if *r.ResponseTimeout != 30*time.Second || *r.IdleTimeout != 0 {
				t.Fatalf("timeouts %v %v", *r.ResponseTimeout, *r.IdleTimeout)
			}
		}},
		{"timeout out of range", func(r *switchyardv1.Route) { r.TimeoutPolicy = &switchyardv1.TimeoutPolicy{Response: "9000h"} }, "is out of range", nil},
		{"retry count 0 disables", func(r *switchyardv1.Route) { r.RetryPolicy = &switchyardv1.RetryPolicy{Count: ptr[int32](0)} }, "", func(t *testing.T, r *Route) {
			if r.Retry != nil {
				t.Fatal("count 0 must disable retries")
			}
		}},
		{"retry default", func(r *switchyardv1.Route) { r.RetryPolicy = &switchyardv1.RetryPolicy{} }, "", func(t *testing.T, r *Route) {
			if r.Retry.Count != 1 || r.Retry.RetryOn[0] != "5xx" {
				t.Fatalf("retry %+v", r.Retry)
			}
		}},
		{"rewrite escapes prefix", func(r *switchyardv1.Route) {
			r.Conditions = []switchyardv1.MatchCondition{{Prefix: "/api"}}
			r.PathRewritePolicy = &switchyardv1.PathRewritePolicy{ReplacePrefix: []switchyardv1.ReplacePrefix{{Replacement: "/../admin"}}}
		}, `contains a ".." segment`, nil},
		{"rewrite", func(r *switchyardv1.Route) {
			r.Conditions = []switchyardv1.MatchCondition{{Prefix: "/api"}}
			r.PathRewritePolicy = &switchyardv1.PathRewritePolicy{ReplacePrefix: []switchyardv1.ReplacePrefix{{Replacement: "/v1"}}}
		}, "", func(t *testing.T, r *Route) {
			if r.PrefixRewrite != "/v1" {
				t.Fatalf("rewrite %q", r.PrefixRewrite)
			}
		}},
		{"header value CRLF", func(r *switchyardv1.Route) {
			r.ResponseHeadersPolicy = &switchyardv1.HeadersPolicy{Set: []switchyardv1.HeaderValue{{Name: "X-A", Value: "1\r\nSet-Cookie: x"}}}
		}, "control character", nil},
		{"cookie affinity", func(r *switchyardv1.Route) {
			r.LoadBalancerPolicy = &switchyardv1.LoadBalancerPolicy{Strategy: switchyardv1.Cookie}
		}, "", func(t *testing.T, r *Route) {
			if r.HashPolicies[0].Cookie == "" || r.Forward.Cluster.Spec.LoadBalancer != LBCookie {
				t.Fatalf("hash %+v lb %s", r.HashPolicies, r.Forward.Cluster.Spec.LoadBalancer)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := route(svc("app", 80))
			tc.route(&r)
			res := build(t, root("web", "web.example.com", r), service("app", 80))
			msgs := strings.Join(errorMessages(statusOf(t, res, objects.KindHTTPProxy, "web")), "\n")
			got := res.DAG.VirtualHosts[0].Routes[0]
			if tc.err != "" {
				if !strings.Contains(msgs, tc.err) || got.DirectResponse == nil || got.DirectResponse.StatusCode != 503 {
					t.Fatalf("errors %q (want %q), route %+v", msgs, tc.err, got)
				}
				return
			}
			if msgs != "" {
				t.Fatalf("unexpected errors %q", msgs)
			}
			tc.check(t, got)
		})
	}
}

func TestRootNamespaces(t *testing.T) {
	res := Build(snapshot(t, root("apps/web", "web.example.com", route(svc("app", 80))), service("apps/app", 80)), Options{RootNamespaces: []string{"ingress"}})
	if len(res.DAG.VirtualHosts) != 0 {
		t.Fatal("root outside the root namespaces must not be served")
	}
	if msgs := errorMessages(statusOf(t, res, objects.KindHTTPProxy, "apps/web")); len(msgs) != 1 || !strings.Contains(msgs[0], "only be created in the namespaces ingress") {
		t.Fatalf("errors %v", msgs)
	}
}

func TestIngressClass(t *testing.T) {
	other := root("other", "other.example.com", route(svc("app", 80)))
	other.Spec.IngressClassName = "internal"
	res := build(t, other, root("web", "web.example.com", route(svc("app", 80))), service("app", 80))
	if len(res.DAG.VirtualHosts) != 1 || res.DAG.VirtualHosts[0].FQDN != "web.example.com" {
		t.Fatal("a proxy of another class must be ignored")
	}
	for _, st := range res.Statuses {
		if st.Key.Name == "other" {
			t.Fatal("a proxy of another class must get no status from this controller")
		}
	}
}

func TestDNSNames(t *testing.T) {
	named := prefixRoute("/api", svc("api", 80))
	named.Name = "api"
	res := build(t, service("api", 80), service("web", 80),
		root("shop", "shop.example.com", named, route(svc("web", 80))))
	var got []string
	for _, n := range res.DAG.DNSNames {
		got = append(got, n.Name+" -> "+n.Cluster.Spec.Backends[0].Service.Name)
	}
	if diff := cmp.Diff([]string{"api.shop.default -> api", "shop.default -> web"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestInvalidProxyIsolation checks that adding an invalid proxy changes no
// other proxy's output.
func TestInvalidProxyIsolation(t *testing.T) {
	base := []runtime.Object{
		service("app", 80), tlsSecret("cert"),
		root("web", "web.example.com", route(svc("app", 80))),
		root("api", "api.example.com", prefixRoute("/v1", svc("app", 80))),
	}
	invalid := []runtime.Object{
		root("bad1", "web.example.com", route(svc("app", 80))),
		root("bad2", "bad.example.com", switchyardv1.Route{Conditions: []switchyardv1.MatchCondition{{Regex: "("}}, Services: []switchyardv1.Service{svc("app", 80)}}),
		root("bad3", "*.*.example.com", route(svc("app", 80))),
		proxy("bad4", switchyardv1.HTTPProxySpec{Includes: []switchyardv1.Include{{Name: "bad4"}}}),
	}
	// The invalid objects are newer, as they are when someone adds them to
	// a running cluster; with equal timestamps a name tie-break decides.
	for _, o := range base {
		if p, ok := o.(*switchyardv1.HTTPProxy); ok {
			p.CreationTimestamp = metav1.NewTime(time.Unix(100, 0))
		}
	}
	for _, o := range invalid {
		o.(*switchyardv1.HTTPProxy).CreationTimestamp = metav1.NewTime(time.Unix(200, 0))
	}
	before := build(t, base...)
	for _, bad := range invalid {
		after := build(t, append(base, bad)...)
		if diff := cmp.Diff(before.DAG, after.DAG); diff != "" {
			t.Errorf("adding %s changed the DAG:\n%s", bad.(*switchyardv1.HTTPProxy).Name, diff)
		}
	}
}

func TestDrainedServiceWarns(t *testing.T) {
	drained := service("b", 80)
	drained.Annotations = map[string]string{objects.DrainAnnotation: "true"}
	res := build(t, service("a", 80), drained, root("web", "web.example.com", route(svc("a", 80), svc("b", 80))))
	st := statusOf(t, res, objects.KindHTTPProxy, "web")
	if st.State != switchyardv1.StatusValid || len(st.Warnings) != 1 || st.Warnings[0].Reason != "ServiceDrained" ||
		!strings.Contains(st.Warnings[0].Message, "spec.routes[0].services[1]: Service default/b is drained") {
		t.Fatalf("state %s warnings %+v", st.State, st.Warnings)
	}
	if n := len(res.DAG.VirtualHosts[0].Routes[0].Forward.Cluster.Spec.Backends); n != 2 {
		t.Fatalf("a drained Service stays in the cluster (its endpoints are DRAINING, not deleted): %d backends", n)
	}
}

// TestDNSNameCollisionIsDeterministic: a proxy named "api.shop" and the
// route "api" of proxy "shop" both want api.shop.<namespace>; which one
// keeps it must not depend on map iteration order.
func TestDNSNameCollisionIsDeterministic(t *testing.T) {
	named := route(svc("a", 80))
	named.Name = "api"
	objs := []runtime.Object{
		service("a", 80), service("b", 80),
		proxy("shop", switchyardv1.HTTPProxySpec{
			VirtualHost: &switchyardv1.VirtualHost{Fqdn: "shop.example.com"},
			Routes:      []switchyardv1.Route{named},
			Includes:    []switchyardv1.Include{{Name: "api.shop", Conditions: []switchyardv1.MatchCondition{{Prefix: "/other"}}}},
		}),
		proxy("api.shop", switchyardv1.HTTPProxySpec{Routes: []switchyardv1.Route{route(svc("b", 80))}}),
	}
	first := ""
	for i := 0; i < 20; i++ {
		res := build(t, objs...)
		var got string
		for _, n := range res.DAG.DNSNames {
			if n.Name == "api.shop.default" {
				got = n.Cluster.Spec.Backends[0].Service.Name
			}
		}
		if got == "" || (first != "" && got != first) {
			t.Fatalf("build %d: api.shop.default -> %q, first build -> %q", i, got, first)
		}
		first = got
	}
}
