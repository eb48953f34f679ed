package pipeline

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

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

// TestGateMetricsPerGateway: what a further gateway's gate withholds is
// counted under its own gateway label, in the metrics the default
// gateway's pipeline registered, and not under the default gateway's.
func TestGateMetricsPerGateway(t *testing.T) {
	reg := prometheus.NewRegistry()
	// A translator that emits the endpoints clients reject gives the gate
	// something to withhold (newUncheckedPipeline).
	opts := translator.DefaultOptions()
	opts.KeepUnusableEndpoints = true
	p := New(xdscache.New(), Config{Translator: opts, Now: newClock().now, Gateways: []string{"edge-b"}, Metrics: NewMetrics(reg)})
	edge := proxyTo("edge", "b.example.com", "b")
	edge.Spec.IngressClassName = "edge-b"
	if _, err := p.Apply(upserts(t, svc("a"), svc("b"), slice("a", "10.0.0.1"), slicePort("b", "10.0.0.2", 70000),
		proxyTo("app", "a.example.com", "a"), edge)); err != nil {
		t.Fatal(err)
	}
	for gw, want := range map[string]float64{"": 0, "edge-b": 1} {
		var m dto.Metric
		if err := p.cfg.Metrics.WithheldNow.WithLabelValues(gw, "envoy", xdsres.ShortType(typeEndpoint)).Write(&m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetGauge().GetValue(); got != want {
			t.Errorf("gateway %q: %v load assignments withheld now, want %v", gw, got, want)
		}
		if err := p.cfg.Metrics.Withheld.WithLabelValues(gw, "envoy", xdsres.ShortType(typeEndpoint)).Write(&m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetCounter().GetValue(); got != want {
			t.Errorf("gateway %q: %v load assignments counted as withheld, want %v", gw, got, want)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gateways := map[string]bool{}
	for _, f := range families {
		if f.GetName() != "switchyard_gate_withheld_resources" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "gateway" {
					gateways[l.GetValue()] = true
				}
			}
		}
	}
	if !gateways[""] || !gateways["edge-b"] || len(gateways) != 2 {
		t.Errorf("the registry's gate gauges are labelled with gateways %v, want \"\" and edge-b", gateways)
	}
}
