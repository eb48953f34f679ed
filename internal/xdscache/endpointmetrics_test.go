package xdscache

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// locality is a LocalityLbEndpoints at a priority with one endpoint per
// health given.
func locality(priority uint32, health ...envoy_config_core_v3.HealthStatus) *envoy_config_endpoint_v3.LocalityLbEndpoints {
	l := &envoy_config_endpoint_v3.LocalityLbEndpoints{Priority: priority}
	for _, h := range health {
		l.LbEndpoints = append(l.LbEndpoints, &envoy_config_endpoint_v3.LbEndpoint{HealthStatus: h})
	}
	return l
}

// scrape gathers the collector's metrics as "cluster priority health value"
// lines, sorted.
func scrape(t *testing.T, c *Cache) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewEndpointCollector(c))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != "switchyard_endpoints" {
			t.Errorf("unexpected metric %s", mf.GetName())
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			out = append(out, fmt.Sprintf("%s %s %s %g", labels["cluster"], labels["priority"], labels["health"], m.GetGauge().GetValue()))
		}
	}
	slices.Sort(out)
	return out
}

// TestEndpointCollector counts the envoy group's endpoints by cluster,
// priority and health: an empty primary still reports 0 healthy (the
// failover signal), DRAINING counts apart, health values Switchyard never
// sends appear only when present, and the other groups are not counted.
func TestEndpointCollector(t *testing.T) {
	const (
		healthy   = envoy_config_core_v3.HealthStatus_HEALTHY
		draining  = envoy_config_core_v3.HealthStatus_DRAINING
		unhealthy = envoy_config_core_v3.HealthStatus_UNHEALTHY
	)
	c := New()
	res := func(cla *envoy_config_endpoint_v3.ClusterLoadAssignment) *xdsres.Resource {
		r, err := xdsres.NewResource(cla)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	envoy := []*xdsres.Resource{
		// Primary drained in one zone and healthy in another, standby ready.
		res(&envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "shop/api", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
			locality(0, healthy, draining), locality(0, healthy), locality(1, healthy, healthy),
		}}),
		// Failed over: the primary's locality is empty.
		res(&envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "shop/jobs", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
			locality(0), locality(1, healthy, unhealthy),
		}}),
		// No localities at all: nothing to report.
		res(&envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "shop/none"}),
	}
	if err := c.Replace(xdsres.GroupEnvoy, map[string][]*xdsres.Resource{resource.EndpointType: envoy}); err != nil {
		t.Fatal(err)
	}
	dns := []*xdsres.Resource{res(&envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "api.shop", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality(0, healthy)}})}
	if err := c.Replace(xdsres.GroupDNS, map[string][]*xdsres.Resource{resource.EndpointType: dns}); err != nil {
		t.Fatal(err)
	}

	want := []string{
		"shop/api 0 draining 1",
		"shop/api 0 healthy 2",
		"shop/api 1 draining 0",
		"shop/api 1 healthy 2",
		"shop/jobs 0 draining 0",
		"shop/jobs 0 healthy 0",
		"shop/jobs 1 draining 0",
		"shop/jobs 1 healthy 1",
		"shop/jobs 1 unhealthy 1",
	}
	if diff := cmp.Diff(want, scrape(t, c)); diff != "" {
		t.Errorf("scrape (-want +got):\n%s", diff)
	}

	// A scrape reads the cache as it is now: the endpoint fast path's
	// update shows at once, and a removed cluster disappears.
	drained := res(&envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "shop/api", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
		locality(0, draining, draining), locality(1, healthy, healthy),
	}})
	if err := c.Replace(xdsres.GroupEnvoy, map[string][]*xdsres.Resource{resource.EndpointType: {drained}}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(scrape(t, c), "\n")
	want2 := strings.Join([]string{
		"shop/api 0 draining 2",
		"shop/api 0 healthy 0",
		"shop/api 1 draining 0",
		"shop/api 1 healthy 2",
	}, "\n")
	if got != want2 {
		t.Errorf("after the update:\n%s\nwant:\n%s", got, want2)
	}
}
