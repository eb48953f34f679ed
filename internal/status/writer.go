// Package status writes what the builds concluded about each HTTPProxy,
// ExtensionService and TLSCertificateDelegation (and, for the mesh, each
// TrafficSplit and TrafficTarget) back to the API server:
// status.currentStatus, status.description, a Valid condition that lists
// every error and warning, and a Programmed condition that says what the
// data plane did with the object (SetProgrammed).
//
// Only the leader writes (leader.go). Builds hand the writer their
// statuses through Update, which stores them and returns at once; a
// worker compares each with the object's status in the informer cache,
// skips those that already match, and writes the rest through the status
// subresource, rate-limited, retrying on conflict with a fresh read. The
// latest status of an object replaces any not yet written, so a burst of
// builds costs one write per object.
package status

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Defaults for Config.
const (
	DefaultQPS   = 20
	DefaultBurst = 50
)

// Config configures a Writer.
type Config struct {
	// REST is how to reach the API server.
	REST *rest.Config
	// Objects returns the cached version of an object, status included
	// (k8ssource.Source.Get), nil when it does not exist.
	Objects func(objects.Key) runtime.Object
	// Election configures leader election; with Election.Disabled the
	// writer always writes.
	Election Election
	// QPS and Burst limit the writes; zero means DefaultQPS, DefaultBurst.
	QPS   float64
	Burst int
	// Registry receives the metrics, when set.
	Registry prometheus.Registerer
	Log      *slog.Logger
	// Now is the clock of lastTransitionTime, time.Now when nil.
	Now func() time.Time
}

// Writer writes statuses. Update may be called from any goroutine; Run
// does the writing.
type Writer struct {
	cfg     Config
	clients map[objects.Kind]resourceClient
	limiter *rate.Limiter
	metrics *metrics
	wake    chan struct{}
	// worker is held by write: leader election starts the worker in a
	// goroutine and does not wait for it to stop, so a new term must.
	worker sync.Mutex

	mu      sync.Mutex
	desired map[objects.Key]*dag.Status
	pending map[objects.Key]bool
	leading bool
	// programmed is the last Programmed condition of each object (see
	// SetProgrammed); an object without one keeps whatever it has.
	programmed map[objects.Key]xdsres.Programmed

	// Owned by the worker goroutine.
	written map[objects.Key]writtenStatus
	retry   map[objects.Key]retryState
}

type resourceClient struct {
	rest     *rest.RESTClient
	resource string
	newObj   func() runtime.Object
}

// writtenStatus remembers a write until the cache catches up with it, so
// that a build finishing in between does not write the same status again.
type writtenStatus struct {
	uid    types.UID
	baseRV string // the resourceVersion the write replaced
	obj    runtime.Object
}

type retryState struct {
	failures int
	at       time.Time
}

// New prepares a writer; nothing is written until Run.
func New(cfg Config) (*Writer, error) {
	if cfg.REST == nil || cfg.Objects == nil {
		return nil, errors.New("status: REST and Objects are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.QPS <= 0 {
		cfg.QPS = DefaultQPS
	}
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultBurst
	}
	v1, err := k8ssource.RESTClient(cfg.REST, switchyardv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	v1alpha1, err := k8ssource.RESTClient(cfg.REST, switchyardv1alpha1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	split, err := k8ssource.RESTClient(cfg.REST, splitv1alpha4.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	access, err := k8ssource.RESTClient(cfg.REST, accessv1alpha3.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		cfg: cfg,
		clients: map[objects.Kind]resourceClient{
			objects.KindHTTPProxy:                {v1, "httpproxies", func() runtime.Object { return &switchyardv1.HTTPProxy{} }},
			objects.KindTLSCertificateDelegation: {v1, "tlscertificatedelegations", func() runtime.Object { return &switchyardv1.TLSCertificateDelegation{} }},
			objects.KindExtensionService:         {v1alpha1, "extensionservices", func() runtime.Object { return &switchyardv1alpha1.ExtensionService{} }},
			// The SMI kinds have a status only as Switchyard's CRDs define
			// them; against SMI's own, which have no status subresource,
			// the write ends as not found and is not retried.
			objects.KindTrafficSplit:  {split, "trafficsplits", func() runtime.Object { return &splitv1alpha4.TrafficSplit{} }},
			objects.KindTrafficTarget: {access, "traffictargets", func() runtime.Object { return &accessv1alpha3.TrafficTarget{} }},
		},
		limiter:    rate.NewLimiter(rate.Limit(cfg.QPS), cfg.Burst),
		metrics:    newMetrics(cfg.Registry),
		wake:       make(chan struct{}, 1),
		desired:    map[objects.Key]*dag.Status{},
		pending:    map[objects.Key]bool{},
		programmed: map[objects.Key]xdsres.Programmed{},
		written:    map[objects.Key]writtenStatus{},
		retry:      map[objects.Key]retryState{},
	}
	return w, nil
}

// Update hands the writer the statuses of a full build. It never blocks:
// it records them and wakes the worker. Objects missing from statuses are
// no longer served by this controller; their status is left as it is.
func (w *Writer) Update(statuses []*dag.Status) {
	desired := make(map[objects.Key]*dag.Status, len(statuses))
	for _, st := range statuses {
		if _, ok := w.clients[st.Key.Kind]; ok {
			desired[st.Key] = st
		}
	}
	w.mu.Lock()
	w.desired = desired
	// Every object is checked: comparing with the cache costs no request,
	// and an object recreated with the same status still needs one.
	clear(w.pending)
	for k := range desired {
		w.pending[k] = true
	}
	w.mu.Unlock()
	w.signal()
}

// Apply hands the writer what a build changed in the statuses. Like
// Update it never blocks; a partial update marks only the objects it
// names, so a build that changed one proxy costs one comparison, not one
// per object.
func (w *Writer) Apply(u dag.StatusUpdate) {
	if u.All {
		w.Update(u.Changed)
		return
	}
	w.mu.Lock()
	for _, k := range u.Removed {
		delete(w.desired, k)
		delete(w.pending, k)
	}
	for _, st := range u.Changed {
		if _, ok := w.clients[st.Key.Kind]; ok {
			w.desired[st.Key] = st
			w.pending[st.Key] = true
		}
	}
	w.mu.Unlock()
	w.signal()
}

// SetProgrammed hands the writer the Programmed condition of every
// HTTPProxy and ExtensionService, as the data plane's ACKs and NACKs
// decide it. Like Update it never blocks; only the objects whose
// condition changed are checked again, so the ACKs of a push that left
// conditions as they were cost no request. m is not kept.
func (w *Writer) SetProgrammed(m map[objects.Key]xdsres.Programmed) {
	w.mu.Lock()
	changed := false
	for k, p := range m {
		if _, ok := w.clients[k.Kind]; !ok {
			continue
		}
		if old, had := w.programmed[k]; had && old == p {
			continue
		}
		w.programmed[k] = p
		if w.desired[k] != nil {
			w.pending[k] = true
			changed = true
		}
	}
	for k := range w.programmed {
		if _, ok := m[k]; !ok {
			delete(w.programmed, k)
		}
	}
	w.mu.Unlock()
	if changed {
		w.signal()
	}
}

func (w *Writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Leading reports whether this writer currently holds the lease.
func (w *Writer) Leading() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.leading
}

// write is the worker: it runs while this replica leads.
func (w *Writer) write(ctx context.Context) {
	w.worker.Lock()
	defer w.worker.Unlock()
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	w.leading = true
	for k := range w.desired {
		w.pending[k] = true
	}
	w.mu.Unlock()
	w.metrics.leader.Set(1)
	defer func() {
		w.mu.Lock()
		w.leading = false
		w.mu.Unlock()
		w.metrics.leader.Set(0)
		// Another leader may have written since: trust only the cache.
		clear(w.written)
		clear(w.retry)
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		next := w.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = max(time.Until(next), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-timer.C:
		}
	}
}

// pass writes every pending status that is due and returns when the
// earliest retry is due (zero when none is waiting).
func (w *Writer) pass(ctx context.Context) time.Time {
	now := time.Now()
	w.mu.Lock()
	// Forget objects no build reports any more (deleted, or of another
	// class now).
	for k := range w.written {
		if w.desired[k] == nil {
			delete(w.written, k)
		}
	}
	for k := range w.retry {
		if w.desired[k] == nil {
			delete(w.retry, k)
		}
	}
	var keys []objects.Key
	var next time.Time
	for k := range w.pending {
		if r, ok := w.retry[k]; ok && r.at.After(now) {
			if next.IsZero() || r.at.Before(next) {
				next = r.at
			}
			continue
		}
		keys = append(keys, k)
		delete(w.pending, k)
	}
	w.mu.Unlock()
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	for i, k := range keys {
		w.mu.Lock()
		st := w.desired[k]
		var prog *xdsres.Programmed
		if p, ok := w.programmed[k]; ok {
			prog = &p
		}
		w.mu.Unlock()
		if st == nil {
			continue
		}
		err := w.sync(ctx, k, st, prog)
		if ctx.Err() != nil {
			w.requeue(keys[i:])
			return next
		}
		if err == nil {
			delete(w.retry, k)
			continue
		}
		r := w.retry[k]
		r.failures++
		r.at = time.Now().Add(backoff(r.failures))
		w.retry[k] = r
		w.cfg.Log.Warn("writing status failed; will retry", "object", k.String(), "in", backoff(r.failures), "error", err)
		w.requeue([]objects.Key{k})
		if next.IsZero() || r.at.Before(next) {
			next = r.at
		}
	}
	return next
}

func (w *Writer) requeue(keys []objects.Key) {
	w.mu.Lock()
	for _, k := range keys {
		if w.desired[k] != nil {
			w.pending[k] = true
		}
	}
	w.mu.Unlock()
}

func backoff(failures int) time.Duration {
	d := 500 * time.Millisecond << min(failures-1, 6)
	return min(d, 30*time.Second)
}

// sync brings one object's status to st and prog, reading the object from the
// cache and, after a conflict, from the API server.
func (w *Writer) sync(ctx context.Context, key objects.Key, st *dag.Status, prog *xdsres.Programmed) error {
	current := w.current(key)
	for attempt := 1; ; attempt++ {
		if current == nil {
			return nil // deleted; its next incarnation gets its own status
		}
		m, err := meta.Accessor(current)
		if err != nil {
			return err
		}
		if m.GetGeneration() > st.Generation {
			return nil // a build of the newer spec is on its way
		}
		updated, changed := apply(current, st, prog, w.cfg.Now())
		if !changed {
			w.metrics.writes.WithLabelValues("unchanged").Inc()
			return nil
		}
		if err := w.limiter.Wait(ctx); err != nil {
			return err
		}
		err = w.put(ctx, key, updated)
		switch {
		case err == nil:
			w.metrics.writes.WithLabelValues("written").Inc()
			w.written[key] = writtenStatus{uid: m.GetUID(), baseRV: m.GetResourceVersion(), obj: updated}
			return nil
		case apierrors.IsNotFound(err):
			w.metrics.writes.WithLabelValues("not_found").Inc()
			return nil
		case apierrors.IsConflict(err) && attempt < 5:
			w.metrics.writes.WithLabelValues("conflict").Inc()
			if current, err = w.get(ctx, key); err != nil {
				return err
			}
		default:
			w.metrics.writes.WithLabelValues("error").Inc()
			return err
		}
	}
}

// current returns the object as last seen: the cache's version, or the
// one this writer wrote when the cache has not caught up with it yet.
func (w *Writer) current(key objects.Key) runtime.Object {
	obj := w.cfg.Objects(key)
	wr, ok := w.written[key]
	if obj == nil || !ok {
		delete(w.written, key)
		return obj
	}
	m, err := meta.Accessor(obj)
	if err == nil && m.GetUID() == wr.uid && m.GetResourceVersion() == wr.baseRV {
		return wr.obj
	}
	delete(w.written, key)
	return obj
}

func (w *Writer) put(ctx context.Context, key objects.Key, obj runtime.Object) error {
	c := w.clients[key.Kind]
	out := c.newObj()
	err := c.rest.Put().Namespace(key.Namespace).Resource(c.resource).Name(key.Name).
		SubResource("status").Body(obj).Do(ctx).Into(out)
	if err == nil {
		// Remember the server's answer: its resourceVersion is what the
		// next write must replace.
		if m, merr := meta.Accessor(obj); merr == nil {
			if mo, oerr := meta.Accessor(out); oerr == nil {
				m.SetResourceVersion(mo.GetResourceVersion())
			}
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func (w *Writer) get(ctx context.Context, key objects.Key) (runtime.Object, error) {
	c := w.clients[key.Kind]
	out := c.newObj()
	err := c.rest.Get().Namespace(key.Namespace).Resource(c.resource).Name(key.Name).
		VersionedParams(&metav1.GetOptions{}, metav1.ParameterCodec).Do(ctx).Into(out)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return out, nil
}
