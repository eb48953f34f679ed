package xdscache

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// endpointsDesc describes switchyard_endpoints.
var endpointsDesc = prometheus.NewDesc(
	"switchyard_endpoints",
	"Endpoints of each cluster served to the envoy group, by priority and health (healthy, draining; others as they appear). "+
		"Every priority a load assignment has reports healthy and draining, 0 included, so that "+
		`switchyard_endpoints{priority="0",health="healthy"} == 0 says a cluster has failed over.`,
	[]string{"cluster", "priority", "health"}, nil,
)

// alwaysReported are the health values every priority of a load
// assignment reports, 0 when it has none: the two Switchyard sends.
var alwaysReported = []envoy_config_core_v3.HealthStatus{
	envoy_config_core_v3.HealthStatus_HEALTHY,
	envoy_config_core_v3.HealthStatus_DRAINING,
}

// EndpointCollector counts, on every scrape, the endpoints of the load
// assignments the cache serves to the envoy group, by cluster, priority
// and health. It exists so that steering is visible where operators look
// (a drained Service, Node or zone, a failover to a standby priority)
// without reading /debug/xds. It reads the cache, not the DAG, so it
// reports what clients are actually being sent, endpoint fast path and
// make-before-break staging included.
//
// The envoy group is the reference: the grpc group's assignments are the
// same with duplicate addresses dropped, and the dns group's are the same
// endpoints under DNS names.
type EndpointCollector struct {
	cache *Cache
}

var _ prometheus.Collector = (*EndpointCollector)(nil)

// NewEndpointCollector returns a collector over c; register it with the
// registry the server's other metrics use.
func NewEndpointCollector(c *Cache) *EndpointCollector {
	return &EndpointCollector{cache: c}
}

// Describe implements prometheus.Collector.
func (e *EndpointCollector) Describe(ch chan<- *prometheus.Desc) { ch <- endpointsDesc }

// Collect implements prometheus.Collector. The cache's lock is held only
// while the resource list is copied; the counting reads immutable
// resources.
func (e *EndpointCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range e.cache.Resources(xdsres.GroupEnvoy, resource.EndpointType) {
		cla, ok := r.Decoded().(*envoy_config_endpoint_v3.ClusterLoadAssignment)
		if !ok {
			continue
		}
		for _, c := range countEndpoints(cla) {
			ch <- prometheus.MustNewConstMetric(endpointsDesc, prometheus.GaugeValue, float64(c.n),
				r.Name, strconv.FormatUint(uint64(c.priority), 10), healthLabel(c.health))
		}
	}
}

// endpointCount is the number of endpoints of one priority with one
// health.
type endpointCount struct {
	priority uint32
	health   envoy_config_core_v3.HealthStatus
	n        int
}

// countEndpoints counts a load assignment's endpoints by priority and
// health, ordered by priority and then health. Every priority that has a
// locality, even an empty one, reports alwaysReported.
func countEndpoints(cla *envoy_config_endpoint_v3.ClusterLoadAssignment) []endpointCount {
	type key struct {
		priority uint32
		health   envoy_config_core_v3.HealthStatus
	}
	counts := map[key]int{}
	for _, l := range cla.GetEndpoints() {
		p := l.GetPriority()
		for _, h := range alwaysReported {
			counts[key{p, h}] += 0
		}
		for _, ep := range l.GetLbEndpoints() {
			counts[key{p, ep.GetHealthStatus()}]++
		}
	}
	out := make([]endpointCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, endpointCount{priority: k.priority, health: k.health, n: n})
	}
	slices.SortFunc(out, func(a, b endpointCount) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.health, b.health))
	})
	return out
}

// healthLabel is the health as the metric labels it: "healthy",
// "draining", ... (the DNS plugin's coredns_switchyard_endpoints uses the
// same words).
func healthLabel(h envoy_config_core_v3.HealthStatus) string {
	return strings.ToLower(h.String())
}
