package pipeline

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// clock is a fake clock the tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time              { return c.t }
func (c *clock) add(d time.Duration)         { c.t = c.t.Add(d) }
func newClock() *clock                       { return &clock{t: time.Unix(1000, 0)} }
func ptr[T any](v T) *T                      { return &v }
func meta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

func svc(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: meta("shop", name), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
}

func slice(svcName, ip string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: svcName + "-1", Labels: map[string]string{objects.ServiceNameLabel: svcName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr[int32](8080)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}}},
	}
}

func proxy(weights ...int64) *switchyardv1.HTTPProxy {
	var services []switchyardv1.Service
	for i, w := range weights {
		services = append(services, switchyardv1.Service{Name: string(rune('a' + i)), Port: 80, Weight: ptr(w)})
	}
	return &switchyardv1.HTTPProxy{ObjectMeta: meta("shop", "app"), Spec: switchyardv1.HTTPProxySpec{
		VirtualHost: &switchyardv1.VirtualHost{Fqdn: "app.example.com"},
		Routes:      []switchyardv1.Route{{Services: services}},
	}}
}

func upserts(t *testing.T, objs ...runtime.Object) []objects.Change {
	t.Helper()
	var out []objects.Change
	for _, o := range objs {
		k, err := objects.KeyOf(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, objects.Change{Key: k, Object: o})
	}
	return out
}

func newPipeline(c *clock) (*Pipeline, *xdscache.Cache) {
	cache := xdscache.New()
	return New(cache, Config{Translator: translator.DefaultOptions(), Now: c.now, Log: slog.New(slog.DiscardHandler)}), cache
}

// newUncheckedPipeline is newPipeline with a translator that emits the
// endpoints clients reject (translator.Options.KeepUnusableEndpoints), as
// a translator with a bug would: what the gate is there to catch.
func newUncheckedPipeline(c *clock) (*Pipeline, *xdscache.Cache) {
	cache := xdscache.New()
	opts := translator.DefaultOptions()
	opts.KeepUnusableEndpoints = true
	return New(cache, Config{Translator: opts, Now: c.now, Log: slog.New(slog.DiscardHandler)}), cache
}

// routeCluster returns the clusters a group's route configuration uses,
// and whether it holds a warm-up route.
func routeCluster(t *testing.T, cache *xdscache.Cache, g xdsres.Group, name string) (string, bool) {
	t.Helper()
	for _, r := range cache.Resources(g, typeRoute) {
		if r.Name != name {
			continue
		}
		rc := r.Decoded().(*envoy_config_route_v3.RouteConfiguration)
		routes := rc.GetVirtualHosts()[0].GetRoutes()
		warm := routes[len(routes)-1].GetName() == "switchyard-warmup"
		return routes[0].GetRoute().GetCluster(), warm
	}
	t.Fatalf("no route configuration %s in group %s", name, g)
	return "", false
}

func TestMakeBeforeBreak(t *testing.T) {
	c := newClock()
	p, cache := newPipeline(c)
	if _, err := p.Apply(upserts(t, svc("a"), svc("b"), slice("a", "10.0.0.1"), slice("b", "10.0.0.2"), proxy(60, 40))); err != nil {
		t.Fatal(err)
	}
	first, warm := routeCluster(t, cache, xdsres.GroupGRPC, "grpc/app.example.com")
	if warm || first == "" {
		t.Fatalf("the first build must go out whole: cluster %q warm-up %v", first, warm)
	}

	c.add(time.Second)
	res, err := p.Apply(upserts(t, proxy(10, 90)))
	if err != nil {
		t.Fatal(err)
	}
	cur, warm := routeCluster(t, cache, xdsres.GroupGRPC, "grpc/app.example.com")
	if cur != first || !warm {
		t.Fatalf("the route must keep its cluster and gain a warm-up route until the new cluster is warm: %q, warm-up %v", cur, warm)
	}
	if envoyCur, _ := routeCluster(t, cache, xdsres.GroupEnvoy, "http/app.example.com"); envoyCur != first {
		t.Fatalf("envoy routes must wait too, got %q", envoyCur)
	}
	if got := len(cache.Resources(xdsres.GroupGRPC, typeCluster)); got != 2 {
		t.Fatalf("both clusters must be served while warming, got %d", got)
	}
	if want := c.now().Add(DefaultWarmup); !res.Next.Equal(want) {
		t.Fatalf("next step at %v, want %v", res.Next, want)
	}

	c.add(DefaultWarmup)
	if _, err := p.Tick(); err != nil {
		t.Fatal(err)
	}
	now, warm := routeCluster(t, cache, xdsres.GroupGRPC, "grpc/app.example.com")
	if now == first || warm {
		t.Fatalf("after the warm-up the route must switch: %q, warm-up %v", now, warm)
	}
	if got := len(cache.Resources(xdsres.GroupEnvoy, typeCluster)); got != 2 {
		t.Fatalf("the old cluster must linger, got %d clusters", got)
	}

	c.add(DefaultLinger)
	if _, err := p.Tick(); err != nil {
		t.Fatal(err)
	}
	if got := len(cache.Resources(xdsres.GroupEnvoy, typeCluster)); got != 1 {
		t.Fatalf("the old cluster must go after lingering, got %d clusters", got)
	}

	// Going back to the first cluster needs a new warm-up: clients dropped it.
	c.add(time.Second)
	if _, err := p.Apply(upserts(t, proxy(60, 40))); err != nil {
		t.Fatal(err)
	}
	if back, warm := routeCluster(t, cache, xdsres.GroupGRPC, "grpc/app.example.com"); back != now || !warm {
		t.Fatalf("switching back must warm up again: %q warm-up %v", back, warm)
	}
}

func TestEndpointPathTouchesOnlyAffectedAssignments(t *testing.T) {
	c := newClock()
	p, cache := newPipeline(c)
	other := &switchyardv1.HTTPProxy{ObjectMeta: meta("shop", "other"), Spec: switchyardv1.HTTPProxySpec{
		VirtualHost: &switchyardv1.VirtualHost{Fqdn: "other.example.com"},
		Routes:      []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: "c", Port: 80}}}},
	}}
	if _, err := p.Apply(upserts(t, svc("a"), svc("b"), svc("c"), slice("a", "10.0.0.1"), slice("b", "10.0.0.2"), slice("c", "10.0.0.3"), proxy(60, 40), other)); err != nil {
		t.Fatal(err)
	}
	before := versions(cache)
	res, err := p.Apply(upserts(t, slice("c", "10.0.0.4")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Full || res.Assignments != 3 {
		t.Fatalf("want the endpoint path recomputing c's load assignment in each group (3), got full=%v assignments=%d", res.Full, res.Assignments)
	}
	after := versions(cache)
	var changed []string
	for k, v := range after {
		if before[k] != v {
			changed = append(changed, k)
		}
	}
	if len(changed) != 3 {
		t.Fatalf("want one changed load assignment per group, got %v", changed)
	}
	for _, k := range changed {
		if !strings.Contains(k, "ClusterLoadAssignment") {
			t.Errorf("%s changed on the endpoint path", k)
		}
	}
}

func versions(c *xdscache.Cache) map[string]string {
	out := map[string]string{}
	for _, g := range xdsres.Groups {
		for _, typ := range xdsres.TypesOf(g) {
			for _, r := range c.Resources(g, typ) {
				out[fmt.Sprintf("%s %s %s", g, typ, r.Name)] = r.Version
			}
		}
	}
	return out
}
