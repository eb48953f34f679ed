package pipeline

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the pipeline's Prometheus metrics.
type Metrics struct {
	BuildSeconds *prometheus.HistogramVec
	Builds       *prometheus.CounterVec
	Resources    *prometheus.GaugeVec
	// Withheld counts the resource versions the gate withheld (gate.go),
	// WithheldNow the resources it withholds as of the last build. Every
	// gateway's pipeline counts into the same two, by its gateway label.
	Withheld    *prometheus.CounterVec
	WithheldNow *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them when reg is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		BuildSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchyard_build_duration_seconds",
			Help:    "Time from a batch of changes to the cache holding the new resources, by kind of build (full or endpoints).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"kind"}),
		Builds:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_builds_total", Help: "Batches applied, by kind of build and result."}, []string{"kind", "result"}),
		Resources: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "switchyard_resources", Help: "Resources served, by consumer group and type."}, []string{"group", "type"}),
		Withheld: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_gate_withheld_resources_total",
			Help: "Resource versions withheld from clients because they failed validation or referred to a withheld resource, by gateway, consumer group and type.",
		}, []string{"gateway", "group", "type"}),
		WithheldNow: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "switchyard_gate_withheld_resources",
			Help: "Resources withheld from clients now (their last good version, if any, is served), by gateway, consumer group and type.",
		}, []string{"gateway", "group", "type"}),
	}
	if reg != nil {
		reg.MustRegister(m.BuildSeconds, m.Builds, m.Resources, m.Withheld, m.WithheldNow)
	}
	return m
}

// forGateway returns the metrics of a further gateway's pipeline: the
// gate's are shared, by their gateway label, and the others are left
// unregistered, since they describe the default gateway and a second
// writer would overwrite its resource gauges.
func (m *Metrics) forGateway() *Metrics {
	gm := NewMetrics(nil)
	gm.Withheld, gm.WithheldNow = m.Withheld, m.WithheldNow
	return gm
}

func (m *Metrics) observe(r Result, err error) {
	kind, result := "endpoints", "ok"
	if r.Full {
		kind = "full"
	}
	if err != nil {
		result = "error"
	}
	m.BuildSeconds.WithLabelValues(kind).Observe(r.Duration.Seconds())
	m.Builds.WithLabelValues(kind, result).Inc()
}
