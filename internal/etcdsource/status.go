package etcdsource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// DefaultLeaseTTL is how long, in seconds, the status writer's lease
// outlives a replica that stopped renewing it: how long status goes
// unwritten after the writer dies.
const DefaultLeaseTTL = 15

// maxTxnOps stays under etcd's default --max-txn-ops (128), with room for
// the leadership check.
const maxTxnOps = 100

// StatusConfig configures a StatusWriter.
type StatusConfig struct {
	Client *clientv3.Client
	Prefix string
	// Identity names this replica in the election key's value.
	Identity string
	// LeaseTTL is in seconds; DefaultLeaseTTL when zero.
	LeaseTTL int
	Metrics  *Metrics
	Log      *slog.Logger
}

// StatusWriter writes each object's status under <prefix>status/. Of the
// replicas sharing a prefix, only the one elected with an etcd lease
// writes, and every write is a transaction that checks it still is, so a
// replica that lost its lease without noticing cannot overwrite the next
// writer's work.
type StatusWriter struct {
	cfg     StatusConfig
	log     *slog.Logger
	wake    chan struct{}
	leading atomic.Bool
	writes  atomic.Int64

	mu      sync.Mutex
	desired map[objects.Key][]byte // from the builds
	broken  map[objects.Key][]byte // values that do not load (SetProblems)
	dirty   map[objects.Key]bool
	sweep   bool // compare every status key with desired
}

// statusValue is what a status key holds: only what the build concluded,
// so that every replica would write the same bytes.
type statusValue struct {
	Kind          string                      `json:"kind"`
	Namespace     string                      `json:"namespace,omitempty"`
	Name          string                      `json:"name"`
	CurrentStatus string                      `json:"currentStatus"`
	Description   string                      `json:"description"`
	Errors        []switchyardv1.SubCondition `json:"errors,omitempty"`
	Warnings      []switchyardv1.SubCondition `json:"warnings,omitempty"`
}

// NewStatusWriter returns a writer; it writes only while Run runs.
func NewStatusWriter(cfg StatusConfig) *StatusWriter {
	cfg.Prefix = CleanPrefix(cfg.Prefix)
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	return &StatusWriter{cfg: cfg, log: log, wake: make(chan struct{}, 1),
		desired: map[objects.Key][]byte{}, broken: map[objects.Key][]byte{}, dirty: map[objects.Key]bool{}}
}

// Apply takes what a build changed in the statuses and returns at once;
// it suits server.Config.OnStatuses.
func (w *StatusWriter) Apply(u dag.StatusUpdate) {
	w.mu.Lock()
	if u.All {
		w.desired = make(map[objects.Key][]byte, len(u.Changed))
		w.sweep = true
	}
	for _, st := range u.Changed {
		w.desired[st.Key] = encodeStatus(st)
		w.dirty[st.Key] = true
	}
	for _, k := range u.Removed {
		delete(w.desired, k)
		w.dirty[k] = true
	}
	w.mu.Unlock()
	w.poke()
}

// SetProblems takes the values that do not load, by the object their key
// names (it suits Config.OnProblems): each gets an invalid status saying
// why, since such an object never reaches a build, and someone reading
// status with etcdctl sees no log.
func (w *StatusWriter) SetProblems(ps map[objects.Key]string) {
	w.mu.Lock()
	for k := range w.broken {
		if _, ok := ps[k]; !ok {
			delete(w.broken, k)
			w.dirty[k] = true
		}
	}
	for k, msg := range ps {
		v := encodeStatus(&dag.Status{Key: k, State: switchyardv1.StatusInvalid, Description: msg,
			Errors: []switchyardv1.SubCondition{{Type: dag.ErrSpec, Reason: "ValueNotLoaded", Message: msg}}})
		if !bytes.Equal(w.broken[k], v) {
			w.broken[k] = v
			w.dirty[k] = true
		}
	}
	w.mu.Unlock()
	w.poke()
}

// want is the status key's value for k, nil for none: a build's status,
// else a problem's. Call with mu held.
func (w *StatusWriter) want(k objects.Key) []byte {
	if v, ok := w.desired[k]; ok {
		return v
	}
	return w.broken[k]
}

func (w *StatusWriter) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func encodeStatus(st *dag.Status) []byte {
	b, _ := json.Marshal(statusValue{ // plain strings and slices: cannot fail
		Kind: st.Key.Kind.String(), Namespace: st.Key.Namespace, Name: st.Key.Name,
		CurrentStatus: st.State, Description: st.Description, Errors: st.Errors, Warnings: st.Warnings,
	})
	return b
}

// Leading reports whether this replica holds the lease and writes.
func (w *StatusWriter) Leading() bool { return w.leading.Load() }

// Writes returns how many status keys this replica wrote or deleted.
func (w *StatusWriter) Writes() int64 { return w.writes.Load() }

// Run campaigns for the lease and, while holding it, writes statuses,
// until ctx is done; then it resigns so that another replica takes over
// at once rather than after the lease's TTL.
func (w *StatusWriter) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if err := w.term(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("etcd status writer: campaigning again", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}

var errLostLease = errors.New("lost the status lease")

// term is one session: campaign, then write until the lease is lost or
// ctx is done.
func (w *StatusWriter) term(ctx context.Context) error {
	// The session's own context is not ctx, so that on shutdown Close can
	// still revoke the lease.
	sess, err := concurrency.NewSession(w.cfg.Client, concurrency.WithTTL(w.cfg.LeaseTTL))
	if err != nil {
		return fmt.Errorf("creating a lease: %w", err)
	}
	defer sess.Close() //nolint:errcheck // best effort: the lease expires anyway
	e := concurrency.NewElection(sess, w.cfg.Prefix+leaderDir+"status")
	// A campaign outlived by its lease (etcd away for longer than the
	// TTL) would wait for a key that is gone: start a new term instead.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-sess.Done():
			cancel()
		case <-cctx.Done():
		}
	}()
	if err := e.Campaign(cctx, w.cfg.Identity); err != nil {
		return err
	}
	w.setLeading(true)
	defer w.setLeading(false)
	w.log.Info("etcd status writer: elected; writing status", "identity", w.cfg.Identity, "lease", fmt.Sprintf("%x", sess.Lease()))
	w.mu.Lock()
	w.sweep = true
	w.mu.Unlock()
	owner := clientv3.Compare(clientv3.CreateRevision(e.Key()), "=", e.Rev())
	for {
		err := w.flush(ctx, owner)
		switch {
		case errors.Is(err, errLostLease):
			return err
		case err != nil && ctx.Err() == nil:
			w.log.Warn("etcd status writer: write failed; retrying", "err", err)
			w.poke()
		}
		wait := w.wake
		if err != nil {
			wait = nil // retry after a pause, not at once
		}
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = e.Resign(rctx) // best effort: closing the session revokes it too
			cancel()
			return nil
		case <-sess.Done():
			return errLostLease
		case <-wait:
		case <-time.After(time.Second):
		}
	}
}

func (w *StatusWriter) setLeading(on bool) {
	w.leading.Store(on)
	w.cfg.Metrics.setLeader(on)
}

// flush writes what is dirty, after a sweep of every status key when one
// is due (a new term, a first build).
func (w *StatusWriter) flush(ctx context.Context, owner clientv3.Cmp) error {
	w.mu.Lock()
	sweep, dirty := w.sweep, w.dirty
	w.sweep, w.dirty = false, map[objects.Key]bool{}
	w.mu.Unlock()
	var ops []clientv3.Op
	err := func() error {
		if sweep {
			var err error
			if ops, err = w.sweepOps(ctx); err != nil {
				return err
			}
		} else {
			ops = w.dirtyOps(dirty)
		}
		return w.commit(ctx, owner, ops)
	}()
	if err != nil {
		w.mu.Lock()
		w.sweep = w.sweep || sweep
		for k := range dirty {
			w.dirty[k] = true
		}
		w.mu.Unlock()
	}
	return err
}

// sweepOps compares every status key with what is desired.
func (w *StatusWriter) sweepOps(ctx context.Context) ([]clientv3.Op, error) {
	base := w.cfg.Prefix + statusDir
	resp, err := w.cfg.Client.Get(ctx, base, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", base, err)
	}
	have := make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		have[string(kv.Key)] = kv.Value
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var ops []clientv3.Op
	seen := make(map[objects.Key]bool, len(w.desired)+len(w.broken))
	for _, m := range []map[objects.Key][]byte{w.desired, w.broken} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			sk, v := StatusKey(w.cfg.Prefix, k), w.want(k)
			if old, ok := have[sk]; !ok || !bytes.Equal(old, v) {
				ops = append(ops, clientv3.OpPut(sk, string(v)))
			}
			delete(have, sk)
		}
	}
	for sk := range have {
		ops = append(ops, clientv3.OpDelete(sk))
	}
	return ops, nil
}

// dirtyOps writes the latest status of each dirty key. Without a sweep
// it cannot know what etcd holds, so it writes them all: a key is dirty
// only when a build recomputed its status.
func (w *StatusWriter) dirtyOps(dirty map[objects.Key]bool) []clientv3.Op {
	w.mu.Lock()
	defer w.mu.Unlock()
	ops := make([]clientv3.Op, 0, len(dirty))
	for k := range dirty {
		sk := StatusKey(w.cfg.Prefix, k)
		if v := w.want(k); v != nil {
			ops = append(ops, clientv3.OpPut(sk, string(v)))
		} else {
			ops = append(ops, clientv3.OpDelete(sk))
		}
	}
	return ops
}

// commit applies ops in transactions of at most maxTxnOps, each only if
// this replica still holds the lease.
func (w *StatusWriter) commit(ctx context.Context, owner clientv3.Cmp, ops []clientv3.Op) error {
	for len(ops) > 0 {
		n := min(len(ops), maxTxnOps)
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := w.cfg.Client.Txn(tctx).If(owner).Then(ops[:n]...).Commit()
		cancel()
		if err != nil {
			return err
		}
		if !resp.Succeeded {
			return errLostLease
		}
		w.writes.Add(int64(n))
		w.cfg.Metrics.wrote(n)
		ops = ops[n:]
	}
	return nil
}
