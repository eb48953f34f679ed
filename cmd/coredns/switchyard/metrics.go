package switchyard

import (
	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The plugin's metrics, registered in the default registry that CoreDNS's
// prometheus plugin serves, named coredns_switchyard_*. xDS metrics are
// labelled by control plane (the configured addresses, comma-separated):
// server blocks sharing a control plane and node see the same data.
var (
	clustersGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: "clusters",
		Help: "Clusters answered (each a DNS name), by control plane.",
	}, []string{"control_plane"})
	endpointsGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: "endpoints",
		Help: "Endpoints of the clusters answered, by control plane and health (healthy, unknown, degraded, draining, unhealthy).",
	}, []string{"control_plane", "health"})
	responsesCounter = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: "xds_updates_total",
		Help: "xDS responses received, by control plane and type (cds, eds).",
	}, []string{"control_plane", "type"})
	acksCounter = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: "xds_acks_total",
		Help: "xDS responses accepted, by control plane and type.",
	}, []string{"control_plane", "type"})
	nacksCounter = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: "xds_nacks_total",
		Help: "xDS responses rejected in whole or in part, by control plane and type.",
	}, []string{"control_plane", "type"})
	connectedGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: "xds_connected",
		Help: "1 while an xDS stream is open, by control plane.",
	}, []string{"control_plane"})
	lastUpdateGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: "xds_last_update_timestamp_seconds",
		Help: "When the answered data last changed, by control plane: alert on its age while xds_connected is 0.",
	}, []string{"control_plane"})
	answersCounter = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace, Subsystem: pluginName, Name: "answers_total",
		Help: "Answers written, by server, query type and rcode.",
	}, []string{"server", "qtype", "rcode"})
)

// clientMetrics are the xDS metrics of one control plane label.
type clientMetrics struct{ label string }

func (m *clientMetrics) responses(t xdsType) {
	responsesCounter.WithLabelValues(m.label, t.String()).Inc()
}

func (m *clientMetrics) ack(t xdsType) { acksCounter.WithLabelValues(m.label, t.String()).Inc() }

func (m *clientMetrics) nack(t xdsType) { nacksCounter.WithLabelValues(m.label, t.String()).Inc() }

func (m *clientMetrics) connected(v bool) {
	f := 0.0
	if v {
		f = 1
	}
	connectedGauge.WithLabelValues(m.label).Set(f)
}

func (m *clientMetrics) table(t *table) {
	clustersGauge.WithLabelValues(m.label).Set(float64(len(t.entries)))
	for h := range numHealth {
		endpointsGauge.WithLabelValues(m.label, h.String()).Set(float64(t.counts[h]))
	}
	lastUpdateGauge.WithLabelValues(m.label).Set(float64(t.built.UnixNano()) / 1e9)
}

// qtypeLabel keeps the qtype label's values few.
func qtypeLabel(qtype uint16) string {
	switch qtype {
	case dns.TypeA, dns.TypeAAAA, dns.TypeSRV, dns.TypeTXT, dns.TypeSOA, dns.TypeNS:
		return dns.TypeToString[qtype]
	}
	return "other"
}
