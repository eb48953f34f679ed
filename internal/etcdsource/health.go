package etcdsource

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Metrics are the source's and the status writer's Prometheus metrics.
// A nil *Metrics records nothing.
type Metrics struct {
	connected     prometheus.Gauge
	rev           prometheus.Gauge
	bad           prometheus.Gauge
	lists         prometheus.Counter
	watchRestarts prometheus.Counter
	events        prometheus.Counter
	leader        prometheus.Gauge
	statusWrites  prometheus.Counter
}

// NewMetrics registers the metrics with r.
func NewMetrics(r prometheus.Registerer) *Metrics {
	m := &Metrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchyard_etcd_connected",
			Help: "1 while etcd answers, 0 while it does not and the last configuration read is served."}),
		rev: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchyard_etcd_revision",
			Help: "The last etcd revision whose changes were read."}),
		bad: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchyard_etcd_invalid_values",
			Help: "Keys whose value did not load (see the log for why)."}),
		lists: prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_etcd_lists_total",
			Help: "Full reads of the prefix: one at the start, one per compaction the watch fell behind."}),
		watchRestarts: prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_etcd_watch_restarts_total",
			Help: "Watches opened again from the last revision seen after one ended."}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_etcd_watch_events_total",
			Help: "Events the watch delivered: changes of object keys, never of the status or election keys Switchyard writes."}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchyard_etcd_status_leader",
			Help: "1 while this replica holds the etcd lease that lets it write status."}),
		statusWrites: prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_etcd_status_writes_total",
			Help: "Status keys written or deleted."}),
	}
	r.MustRegister(m.connected, m.rev, m.bad, m.lists, m.watchRestarts, m.events, m.leader, m.statusWrites)
	return m
}

func (m *Metrics) setConnected(up bool) {
	if m != nil {
		m.connected.Set(b2f(up))
	}
}

func (m *Metrics) revision(rev int64) {
	if m != nil {
		m.rev.Set(float64(rev))
	}
}

func (m *Metrics) invalid(n int) {
	if m != nil {
		m.bad.Set(float64(n))
	}
}

func (m *Metrics) listed() {
	if m != nil {
		m.lists.Inc()
	}
}

func (m *Metrics) watchRestarted() {
	if m != nil {
		m.watchRestarts.Inc()
	}
}

func (m *Metrics) watchEvents(n int) {
	if m != nil {
		m.events.Add(float64(n))
	}
}

func (m *Metrics) setLeader(on bool) {
	if m != nil {
		m.leader.Set(b2f(on))
	}
}

func (m *Metrics) wrote(n int) {
	if m != nil {
		m.statusWrites.Add(float64(n))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// probe checks that etcd answers a linearizable read (which needs a
// quorum) every ProbeInterval. A watch alone cannot tell: while etcd is
// away the client retries silently and the watch just has nothing to say.
func (s *Source) probe(ctx context.Context) {
	t := time.NewTicker(s.cfg.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := s.ping(ctx)
		if ctx.Err() != nil {
			return
		}
		s.setReachable(err)
	}
}

// ping asks etcd for one linearizable read, for at most ProbeTimeout.
func (s *Source) ping(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, s.cfg.ProbeTimeout)
	defer cancel()
	_, err := s.cfg.Client.Get(pctx, s.cfg.Prefix, clientv3.WithCountOnly())
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("no answer within %v", s.cfg.ProbeTimeout)
	}
	return err
}

// setReachable records the outcome of a request to etcd, logging when
// that changes.
func (s *Source) setReachable(err error) {
	s.mu.Lock()
	was := s.reach.down
	switch {
	case err == nil:
		s.reach = reachability{}
	case !was:
		s.reach = reachability{down: true, since: time.Now(), lastErr: err.Error()}
	default:
		s.reach.lastErr = err.Error()
	}
	now := s.reach.down
	s.mu.Unlock()
	s.cfg.Metrics.setConnected(!now)
	switch {
	case now && !was && s.Revision() == 0:
		s.log.Warn("etcd unreachable; waiting for it before the first build", "err", err)
	case now && !was:
		s.log.Warn("etcd unreachable; serving the last configuration read", "revision", s.Revision(), "err", err)
	case was && !now:
		s.log.Info("etcd reachable again", "revision", s.Revision())
	}
}

// Revision returns the last revision read.
func (s *Source) Revision() int64 { return s.seen.Load() }

// Reachable reports whether etcd answered the last request.
func (s *Source) Reachable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.reach.down
}

// ReadyDetail is the line /readyz adds: whether etcd answers, and when it
// does not, since when and that the last configuration read is served.
func (s *Source) ReadyDetail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	bad := ""
	if n := len(s.problems); n > 0 {
		bad = fmt.Sprintf("; %d values not loaded (see the log)", n)
	}
	if !s.reach.down {
		return fmt.Sprintf("etcd: connected, prefix %s%s", s.cfg.Prefix, bad)
	}
	return fmt.Sprintf("etcd: unreachable since %s (%s); serving the last configuration read%s",
		s.reach.since.UTC().Format(time.RFC3339), s.reach.lastErr, bad)
}
