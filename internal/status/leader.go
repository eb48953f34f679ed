package status

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Election configures leader election with a coordination.k8s.io Lease.
// Every replica serves xDS; only the one holding the Lease writes status.
type Election struct {
	// Disabled makes this replica write status without a Lease, for a
	// single replica.
	Disabled bool
	// Namespace and Name of the Lease.
	Namespace, Name string
	// Identity names this replica in the Lease; unique per replica.
	Identity string
	// LeaseDuration is how long the others wait after the leader's last
	// renewal before taking over; RenewDeadline is how long the leader
	// keeps trying to renew before giving up; RetryPeriod is how often
	// both try. Zero means the Default values.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Defaults of Election, those of Kubernetes' own controllers.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Run writes statuses while this replica leads, and campaigns for the
// Lease again whenever it loses it, until ctx is done. On return it
// releases the Lease, so that another replica takes over at once.
func (w *Writer) Run(ctx context.Context) error {
	e := w.cfg.Election
	if e.Disabled {
		w.write(ctx)
		return nil
	}
	if e.Namespace == "" || e.Name == "" || e.Identity == "" {
		return errors.New("status: leader election needs a Lease namespace, name and identity")
	}
	cs, err := kubernetes.NewForConfig(w.cfg.REST)
	if err != nil {
		return err
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, e.Namespace, e.Name, nil, cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: e.Identity})
	if err != nil {
		return err
	}
	lec := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   orDefault(e.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline:   orDefault(e.RenewDeadline, DefaultRenewDeadline),
		RetryPeriod:     orDefault(e.RetryPeriod, DefaultRetryPeriod),
		ReleaseOnCancel: true,
		Name:            e.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				w.cfg.Log.Info("leading: writing status", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
				w.metrics.transitions.Inc()
				w.write(ctx)
			},
			OnStoppedLeading: func() {
				w.cfg.Log.Info("not leading: status is left to the leader", "lease", e.Namespace+"/"+e.Name)
			},
			OnNewLeader: func(id string) {
				if id != e.Identity {
					w.cfg.Log.Info("following", "leader", id)
				}
			},
		},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(lec)
		if err != nil {
			return err
		}
		le.Run(ctx) // returns when leadership is lost or ctx is done
	}
	// Wait for the worker of the last term to stop.
	w.worker.Lock()
	w.worker.Unlock() //nolint:staticcheck // an empty critical section: waiting is the point
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// metrics are the writer's Prometheus metrics.
type metrics struct {
	writes      *prometheus.CounterVec
	leader      prometheus.Gauge
	transitions prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_status_updates_total",
			Help: "Statuses checked by the leader, by result: written, unchanged (no write needed), conflict (retried), not_found, error.",
		}, []string{"result"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "switchyard_status_leader",
			Help: "1 while this replica holds the leader Lease and writes status.",
		}),
		transitions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_status_leader_acquisitions_total",
			Help: "Times this replica became the leader.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.writes, m.leader, m.transitions)
	}
	return m
}
