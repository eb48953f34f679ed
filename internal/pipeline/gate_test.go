package pipeline

import (
	"strings"
	"testing"
	"time"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
	discoveryv1 "k8s.io/api/discovery/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// mustEncode encodes m as the engine would, failing the test if it cannot.
func mustEncode(t *testing.T, m proto.Message) *xdsres.Resource {
	t.Helper()
	r, err := xdsres.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// slicePort is slice with another target port.
func slicePort(svcName, ip string, port int32) *discoveryv1.EndpointSlice {
	es := slice(svcName, ip)
	es.Ports[0].Port = &port
	return es
}

func proxyTo(name, fqdn, service string) *switchyardv1.HTTPProxy {
	return &switchyardv1.HTTPProxy{ObjectMeta: meta("shop", name), Spec: switchyardv1.HTTPProxySpec{
		VirtualHost: &switchyardv1.VirtualHost{Fqdn: fqdn},
		Routes:      []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: service, Port: 80}}}},
	}}
}

// cached decodes what the cache serves to a group.
func cached(t *testing.T, c *xdscache.Cache, g xdsres.Group) *translator.Resources {
	t.Helper()
	var ms []proto.Message
	for _, typ := range xdsres.TypesOf(g) {
		for _, r := range c.Resources(g, typ) {
			ms = append(ms, r.Decoded())
		}
	}
	out, err := xdscheck.Collect(ms)
	if err != nil {
		t.Fatalf("group %s: %v", g, err)
	}
	return out
}

// assertServedValid checks what the cache would send every group with
// xdscheck, as the golden tests check translations.
func assertServedValid(t *testing.T, c *xdscache.Cache) {
	t.Helper()
	for _, g := range xdsres.Groups {
		for _, err := range xdscheck.CheckServed(g, cached(t, c, g)) {
			t.Errorf("group %s is served something invalid: %v", g, err)
		}
	}
}

func statusOf(sts []*dag.Status, ns, name string) *dag.Status {
	for _, st := range sts {
		if st.Key == (objects.Key{Kind: objects.KindHTTPProxy, Namespace: ns, Name: name}) {
			return st
		}
	}
	return nil
}

// rejectedWith returns the ResourceRejected error of a status that says
// text, "" when there is none.
func rejectedWith(st *dag.Status, text string) string {
	if st == nil {
		return ""
	}
	for _, c := range st.Errors {
		if c.Reason == "ResourceRejected" && strings.Contains(c.Message, text) {
			return c.Message
		}
	}
	return ""
}

// TestGateKeepsLastGoodLoadAssignment breaks the endpoints of a served
// cluster under a translator that emits them (newUncheckedPipeline): the
// old load assignment stays, nothing else changes, the proxy says why, the
// metric counts it, and fixing the slice clears it all.
func TestGateKeepsLastGoodLoadAssignment(t *testing.T) {
	c := newClock()
	p, cache := newUncheckedPipeline(c)
	if _, err := p.Apply(upserts(t, svc("a"), svc("c"), slice("a", "10.0.0.1"), slice("c", "10.0.0.3"),
		proxyTo("app", "app.example.com", "a"), proxyTo("other", "other.example.com", "c"))); err != nil {
		t.Fatal(err)
	}
	before := versions(cache)
	res, err := p.Apply(upserts(t, slicePort("a", "10.0.0.1", 70000)))
	if err != nil {
		t.Fatal(err)
	}
	if after := versions(cache); !sameVersions(before, after) {
		t.Fatalf("a withheld load assignment changed what is served:\nbefore %v\nafter  %v", before, after)
	}
	msg := rejectedWith(statusOf(res.StatusUpdate.Changed, "shop", "app"), "port_value: 70000")
	if msg == "" {
		t.Fatalf("the batch's status update must say shop/app's load assignment has port 70000: %v", res.StatusUpdate.Changed)
	}
	t.Logf("shop/app: %s", msg)
	if n := len(statusOf(p.Statuses(), "shop", "app").Errors); n != 2 {
		t.Errorf("want one error for the envoy and grpc groups' shared load assignment and one for dns's, got %d", n)
	}
	if !strings.Contains(msg, "EndpointSlice shop/a-1") {
		t.Errorf("the message must name the EndpointSlice: %s", msg)
	}
	if st := statusOf(p.Statuses(), "shop", "app"); st.State != switchyardv1.StatusInvalid || rejectedWith(st, "70000") == "" {
		t.Errorf("Statuses must report it too: %+v", st)
	}
	if st := statusOf(p.Statuses(), "shop", "other"); st.State != switchyardv1.StatusValid {
		t.Errorf("shop/other must stay valid: %+v", st)
	}
	for _, g := range []string{"envoy", "grpc"} {
		var m dto.Metric
		if err := p.cfg.Metrics.Withheld.WithLabelValues("", g, xdsres.ShortType(typeEndpoint)).Write(&m); err != nil {
			t.Fatal(err)
		}
		if n := m.GetCounter().GetValue(); n != 1 {
			t.Errorf("group %s: %v load assignments counted as withheld, want 1", g, n)
		}
		if err := p.cfg.Metrics.WithheldNow.WithLabelValues("", g, xdsres.ShortType(typeEndpoint)).Write(&m); err != nil {
			t.Fatal(err)
		}
		if n := m.GetGauge().GetValue(); n != 1 {
			t.Errorf("group %s: the gauge says %v load assignments are withheld, want 1", g, n)
		}
	}
	assertServedValid(t, cache)

	res, err = p.Apply(upserts(t, slice("a", "10.0.0.9")))
	if err != nil {
		t.Fatal(err)
	}
	if st := statusOf(res.StatusUpdate.Changed, "shop", "app"); st == nil || st.State != switchyardv1.StatusValid {
		t.Fatalf("fixing the slice must report shop/app valid again: %+v", st)
	}
	if len(p.Rejected()) != 0 {
		t.Fatalf("nothing must stay withheld: %v", p.Rejected())
	}
	if after := versions(cache); sameVersions(before, after) {
		t.Fatal("the fixed load assignment must go out")
	}
	assertServedValid(t, cache)
}

// TestGateWithholdsWhatUsesANewBadCluster starts with a host whose only
// cluster has a bad endpoint (never served: there is no good version; the
// translator emits it, newUncheckedPipeline),
// then moves a served host to that cluster: its route keeps the cluster
// it had, which stays although the build dropped it.
func TestGateWithholdsWhatUsesANewBadCluster(t *testing.T) {
	c := newClock()
	p, cache := newUncheckedPipeline(c)
	res, err := p.Apply(upserts(t, svc("a"), svc("z"), slice("a", "10.0.0.1"), slice("z", "10.0.0.999"),
		proxyTo("app", "app.example.com", "a"), proxyTo("bad", "bad.example.com", "z")))
	if err != nil {
		t.Fatal(err)
	}
	assertServedValid(t, cache)
	if rejectedWith(statusOf(res.StatusUpdate.Changed, "shop", "bad"), `"10.0.0.999" is not an IP address`) == "" {
		t.Fatalf("shop/bad must say which address is wrong: %+v", statusOf(res.StatusUpdate.Changed, "shop", "bad"))
	}
	for _, r := range cache.Resources(xdsres.GroupEnvoy, typeRoute) {
		if strings.Contains(r.Name, "bad.example.com") {
			t.Errorf("route configuration %s is served though its cluster is withheld", r.Name)
		}
	}
	if st := statusOf(res.StatusUpdate.Changed, "shop", "app"); st.State != switchyardv1.StatusValid {
		t.Fatalf("shop/app must stay valid: %+v", st)
	}
	first, _ := routeCluster(t, cache, xdsres.GroupEnvoy, "http/app.example.com")

	c.add(time.Second)
	if _, err := p.Apply(upserts(t, proxyTo("app", "app.example.com", "z"))); err != nil {
		t.Fatal(err)
	}
	assertServedValid(t, cache)
	if now, _ := routeCluster(t, cache, xdsres.GroupEnvoy, "http/app.example.com"); now != first {
		t.Fatalf("shop/app's route must keep cluster %s, got %s", first, now)
	}
	if rejectedWith(statusOf(p.Statuses(), "shop", "app"), "10.0.0.999") == "" {
		t.Fatalf("shop/app must say why its change is withheld: %+v", statusOf(p.Statuses(), "shop", "app"))
	}

	// Fixing the endpoint lets everything out, after the usual warm-up.
	c.add(time.Second)
	if _, err := p.Apply(upserts(t, slice("z", "10.0.0.26"))); err != nil {
		t.Fatal(err)
	}
	c.add(DefaultWarmup)
	if _, err := p.Tick(); err != nil {
		t.Fatal(err)
	}
	if now, _ := routeCluster(t, cache, xdsres.GroupEnvoy, "http/app.example.com"); now == first {
		t.Fatal("shop/app's route must move to the fixed cluster")
	}
	if len(p.Rejected()) != 0 {
		t.Fatalf("nothing must stay withheld: %v", p.Rejected())
	}
	assertServedValid(t, cache)
}

func sameVersions(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestHTTPSListenerKeepsGoodChains fails one filter chain of the HTTPS
// listener, which every secure host shares: the listener is served with
// the other chains, and only the failing host's proxies are told, with the
// chain's own problem.
func TestHTTPSListenerKeepsGoodChains(t *testing.T) {
	chain := func(host string) *envoy_config_listener_v3.FilterChain {
		return &envoy_config_listener_v3.FilterChain{FilterChainMatch: &envoy_config_listener_v3.FilterChainMatch{ServerNames: []string{host}}}
	}
	bad := chain("bad.example.com")
	bad.Filters = []*envoy_config_listener_v3.Filter{{Name: ""}}
	l := translator.HTTPSListenerWithChains([]*envoy_config_listener_v3.FilterChain{chain("good.example.com"), bad}, translator.DefaultOptions())
	r, err := xdsres.Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	target := incremental.Targets{resource.ListenerType: xdsres.SetOf(map[string]*xdsres.Resource{translator.HTTPSListenerName: r})}
	gt := NewGate()
	served, _, fresh := gt.Pass(xdsres.GroupEnvoy, target, nil, true)
	got, ok := served[resource.ListenerType].Get(translator.HTTPSListenerName).Decoded().(*envoy_config_listener_v3.Listener)
	if !ok || len(got.GetFilterChains()) != 1 || got.GetFilterChains()[0].GetFilterChainMatch().GetServerNames()[0] != "good.example.com" {
		t.Fatalf("want the listener served with good.example.com's chain alone, got %v", got)
	}
	if len(fresh) != 1 {
		t.Fatalf("want one fresh rejection, got %v", fresh)
	}
	owners := func(g xdsres.Group, typ, name string) []objects.Key {
		host := strings.TrimPrefix(name, translator.HTTPSRouteName(""))
		return []objects.Key{{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: strings.TrimSuffix(host, ".example.com")}}
	}
	conds := RejectionConditions(gt.Rejected(), owners)
	if len(conds) != 1 {
		t.Fatalf("want shop/bad told alone, got %v", conds)
	}
	cs := conds[objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: "bad"}]
	if len(cs) != 1 || !strings.Contains(cs[0].Message, `filter chain for bad.example.com: envoy.config.listener.v3.FilterChain: filters[0].name: "": value length must be at least 1`) {
		t.Fatalf("shop/bad's conditions: %v", cs)
	}

	// Fixed, the build's listener goes out whole and nothing is withheld.
	fixed := translator.HTTPSListenerWithChains([]*envoy_config_listener_v3.FilterChain{chain("good.example.com"), chain("bad.example.com")}, translator.DefaultOptions())
	fr, err := xdsres.Encode(fixed)
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]map[string]incremental.Change{resource.ListenerType: {translator.HTTPSListenerName: {Old: r, New: fr}}}
	target[resource.ListenerType].Put(translator.HTTPSListenerName, fr)
	served, _, _ = gt.Pass(xdsres.GroupEnvoy, target, changes, false)
	if served[resource.ListenerType].Get(translator.HTTPSListenerName) != fr || len(gt.Rejected()) != 0 {
		t.Fatalf("the fixed listener must go out, with nothing withheld: %v", gt.Rejected())
	}
}
