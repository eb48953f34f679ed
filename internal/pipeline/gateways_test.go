package pipeline

import (
	"fmt"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestGatewaysGetTheirOwnSlices: with gateways edge-a and edge-b, each
// cache holds its own proxy's cluster only, a proxy of a gateway not
// served gets no status, and the statuses of all served proxies come back
// together, sorted, with a proxy moving between gateways followed.
func TestGatewaysGetTheirOwnSlices(t *testing.T) {
	c := newClock()
	cache := xdscache.New()
	p := New(cache, Config{Translator: translator.DefaultOptions(), Now: c.now, Gateways: []string{"edge-a", "edge-b"}})
	classed := func(name, class, fqdn string, weights ...int64) objects.Change {
		px := proxy(weights...)
		px.Name, px.Spec.IngressClassName, px.Spec.VirtualHost.Fqdn = name, class, fqdn
		return upserts(t, px)[0]
	}
	changes := append(upserts(t, svc("a"), svc("b"), svc("c")),
		classed("default", "", "d.example.com", 1),
		classed("first", "edge-a", "a.example.com", 0, 1),
		classed("second", "edge-b", "b.example.com", 0, 0, 1),
		classed("elsewhere", "not-served", "x.example.com", 1))
	if _, err := p.Apply(changes); err != nil {
		t.Fatal(err)
	}
	clusters := func(gw string) string {
		var out []string
		for _, r := range cache.Gateway(gw).Resources(xdsres.GroupEnvoy, typeCluster) {
			out = append(out, r.Name[:len("shop/a")])
		}
		return fmt.Sprint(out)
	}
	for gw, want := range map[string]string{"": "[shop/a]", "edge-a": "[shop/b]", "edge-b": "[shop/c]"} {
		if got := clusters(gw); got != want {
			t.Errorf("gateway %q serves clusters %s, want %s", gw, got, want)
		}
	}
	statuses := func() string {
		var out []string
		for _, st := range p.Statuses() {
			out = append(out, st.Key.Name+"="+st.State)
		}
		return fmt.Sprint(out)
	}
	if got, want := statuses(), "[default=valid first=valid second=valid]"; got != want {
		t.Errorf("statuses %s, want %s", got, want)
	}

	// The edge-a proxy moves to edge-b: edge-a serves nothing any more.
	res, err := p.Apply([]objects.Change{classed("first", "edge-b", "a.example.com", 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	// Removed clusters linger (staging.go), in every gateway alike.
	c.add(DefaultWarmup + DefaultLinger)
	if _, err := p.Tick(); err != nil {
		t.Fatal(err)
	}
	if got := clusters("edge-a"); got != "[]" {
		t.Errorf("edge-a still serves %s", got)
	}
	if got := clusters("edge-b"); got != "[shop/b shop/c]" {
		t.Errorf("edge-b serves %s, want [shop/b shop/c]", got)
	}
	if got, want := statuses(), "[default=valid first=valid second=valid]"; got != want {
		t.Errorf("after the move: statuses %s, want %s", got, want)
	}
	if len(res.StatusUpdate.Changed) == 0 && len(res.StatusUpdate.Removed) == 0 && !res.StatusUpdate.All {
		t.Errorf("the move changed no status in the update")
	}
}
