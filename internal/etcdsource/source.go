package etcdsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Config configures a Source.
type Config struct {
	Client *clientv3.Client
	// Prefix is where the objects are (CleanPrefix applied); DefaultPrefix
	// when empty.
	Prefix string
	// Metrics, when set, receive what the source does (NewMetrics).
	Metrics *Metrics
	Log     *slog.Logger
	// PageSize is how many keys one read of the initial list returns.
	PageSize int64
	// OnProblems, when set, receives every change to the set of values
	// that do not load, keyed by the object their key names: the status
	// writer reports them where status is read.
	OnProblems func(map[objects.Key]string)
	// ProbeInterval is how often reachability is checked, ProbeTimeout
	// how long one check may take; zero means 2s and 3s.
	ProbeInterval, ProbeTimeout time.Duration
	// WithoutMesh is set when the builds run without the mesh
	// (dag.Options.Mesh off): Services are then held without their
	// selectors, which only the mesh reads. Unset, everything a build may
	// read is kept.
	WithoutMesh bool
}

// Source reads objects from etcd: a list at one revision, then a watch
// from that revision. It implements the control plane's Source.
type Source struct {
	cfg Config
	log *slog.Logger

	// Only Start and then Run's goroutine touch these.
	rev     int64 // the last revision whose changes were emitted
	entries map[string]entry
	logged  map[string]string // problem logged per key

	seen atomic.Int64 // rev, for other goroutines

	mu       sync.Mutex
	reach    reachability
	problems map[string]dirsource.Problem
	lists    int
	events   int
}

// entry is what one key held when last read.
type entry struct {
	mod int64
	obj objects.Key // zero when the value did not load
}

type reachability struct {
	down    bool
	since   time.Time
	lastErr string
}

// New returns a source; nothing is read until Start.
func New(cfg Config) *Source {
	cfg.Prefix = CleanPrefix(cfg.Prefix)
	if cfg.PageSize <= 0 {
		cfg.PageSize = 1000
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = 2 * time.Second
	}
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = 3 * time.Second
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	return &Source{cfg: cfg, log: log, entries: map[string]entry{}, logged: map[string]string{}, problems: map[string]dirsource.Problem{}}
}

// Start lists every key under the prefix at one revision. It retries
// until etcd answers or ctx is done: a control plane started before its
// etcd waits for it rather than serving nothing.
func (s *Source) Start(ctx context.Context) ([]objects.Change, error) {
	for {
		// A quick read first: a list waits up to 30s for an answer, too
		// long to say that etcd is away.
		err := s.ping(ctx)
		if err == nil {
			var kvs []*mvccpb.KeyValue
			var rev int64
			if kvs, rev, err = s.list(ctx); err == nil {
				s.setReachable(nil)
				return s.replace(kvs, rev), nil
			}
		}
		s.setReachable(err)
		if !retryable(err) {
			return nil, fmt.Errorf("listing %s in etcd: %w", s.cfg.Prefix, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("listing %s in etcd: %w", s.cfg.Prefix, err)
		case <-time.After(s.cfg.ProbeInterval):
		}
	}
}

// list reads every object key under the prefix (objectRanges), a page at
// a time, all pages at the revision of the first so that the result is
// one consistent state.
func (s *Source) list(ctx context.Context) ([]*mvccpb.KeyValue, int64, error) {
	var (
		kvs []*mvccpb.KeyValue
		rev int64
	)
	for _, r := range objectRanges(s.cfg.Prefix) {
		key := r.from
		for {
			opts := []clientv3.OpOption{clientv3.WithRange(r.end), clientv3.WithLimit(s.cfg.PageSize)}
			if rev != 0 {
				opts = append(opts, clientv3.WithRev(rev))
			}
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			resp, err := s.cfg.Client.Get(rctx, key, opts...)
			cancel()
			if err != nil {
				return nil, 0, err
			}
			if rev == 0 {
				rev = resp.Header.Revision
			}
			kvs = append(kvs, resp.Kvs...)
			if !resp.More || len(resp.Kvs) == 0 {
				break
			}
			key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
	}
	s.mu.Lock()
	s.lists++
	s.mu.Unlock()
	s.cfg.Metrics.listed()
	return kvs, rev, nil
}

// replace makes kvs, read at rev, the whole state, and returns what
// changed: everything on the first list, the difference on a re-list.
func (s *Source) replace(kvs []*mvccpb.KeyValue, rev int64) []objects.Change {
	seen := make(map[string]bool, len(kvs))
	var changes []objects.Change
	for _, kv := range kvs {
		k := string(kv.Key)
		if ownKey(s.cfg.Prefix, k) {
			continue
		}
		seen[k] = true
		if e, ok := s.entries[k]; ok && e.mod == kv.ModRevision {
			continue
		}
		changes = append(changes, s.put(k, kv)...)
	}
	for k := range s.entries {
		if !seen[k] {
			changes = append(changes, s.remove(k)...)
		}
	}
	s.setRev(rev)
	s.publishProblems()
	return changes
}

// put reads one key's value, returning the changes it makes: the object
// it holds, and the removal of the one it held before if that no longer
// loads.
func (s *Source) put(k string, kv *mvccpb.KeyValue) []objects.Change {
	old := s.entries[k]
	obj, p := s.decode(k, kv.Value)
	s.mu.Lock()
	if p != nil {
		s.problems[k] = *p
	} else {
		delete(s.problems, k)
	}
	s.mu.Unlock()
	s.entries[k] = entry{mod: kv.ModRevision, obj: obj.Key}
	var changes []objects.Change
	if old.obj != (objects.Key{}) && old.obj != obj.Key {
		changes = append(changes, objects.Change{Key: old.obj})
	}
	if obj.Object != nil {
		changes = append(changes, objects.Change{Key: obj.Key, Object: obj.Object})
	}
	return changes
}

func (s *Source) remove(k string) []objects.Change {
	old, ok := s.entries[k]
	delete(s.entries, k)
	s.mu.Lock()
	delete(s.problems, k)
	s.mu.Unlock()
	if !ok || old.obj == (objects.Key{}) {
		return nil
	}
	return []objects.Change{{Key: old.obj}}
}

// decode reads one value with the directory source's decoder. The key
// must name the object the value holds, so that one key is one object and
// two keys can never define the same object.
func (s *Source) decode(k string, value []byte) (dirsource.Object, *dirsource.Problem) {
	want, err := ParseKey(s.cfg.Prefix, k)
	if err != nil {
		return dirsource.Object{}, &dirsource.Problem{File: k, Severity: dirsource.Error, Message: err.Error()}
	}
	named := func(msg string) *dirsource.Problem {
		return &dirsource.Problem{File: k, Kind: want.Kind.String(), Namespace: want.Namespace, Name: want.Name, Severity: dirsource.Error, Message: msg}
	}
	objs, ps := dirsource.Decode(k, value, dirsource.Mesh(!s.cfg.WithoutMesh))
	switch {
	case len(ps) > 0:
		p := ps[0]
		// Even a kind switchyard does not read is an error here: the key
		// says what the value should be.
		p.Severity = dirsource.Error
		return dirsource.Object{}, &p
	case len(objs) == 0:
		return dirsource.Object{}, named("value holds no object")
	case len(objs) > 1:
		return dirsource.Object{}, named(fmt.Sprintf("value holds %d objects; a key holds exactly one", len(objs)))
	case objs[0].Key != want:
		return dirsource.Object{}, named(fmt.Sprintf("value is %s, but the key names %s", objs[0].Key, want))
	}
	return objs[0], nil
}

// Run follows the watch until ctx is done. The etcd client resumes a
// watch broken by a disconnect from the last revision it delivered; when
// the watch ends anyway (no leader, a restarted member that lost the
// stream) it is opened again from the last revision seen, and when that
// revision has been compacted away everything is listed again and the
// difference emitted, so nothing is lost either way.
func (s *Source) Run(ctx context.Context, emit func([]objects.Change)) error {
	probed := make(chan struct{})
	go func() { defer close(probed); s.probe(ctx) }()
	defer func() { <-probed }()
	pause := minPause
	for ctx.Err() == nil {
		from := s.rev
		err := s.watch(ctx, emit)
		if ctx.Err() != nil {
			break
		}
		if errors.Is(err, rpctypes.ErrCompacted) {
			s.log.Warn("etcd watch fell behind a compaction; listing again", "prefix", s.cfg.Prefix, "revision", s.rev)
			s.relist(ctx, emit)
			continue
		}
		s.cfg.Metrics.watchRestarted()
		// A watch that delivered something was healthy: start again at
		// once. One that ended with nothing waits longer each time, so
		// that a cluster without a leader is not asked in a busy loop.
		if s.rev > from {
			pause = minPause
		} else {
			pause = min(2*pause, maxPause)
		}
		if err == nil {
			err = errors.New("watch closed")
		}
		s.log.Info("etcd watch ended; watching again from the last revision seen", "revision", s.rev, "in", pause, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
	return nil
}

// The pauses between watches that end without delivering anything.
const (
	minPause = 50 * time.Millisecond
	maxPause = 5 * time.Second
)

// watch delivers the changes of one watch of each object range until one
// of them ends. The etcd client carries them on one gRPC stream. Each
// delivers its own range in revision order, but not in step with the
// others, so the revision to resume from is the lowest any of them has
// reached; an event seen again after a resume is recognised by its key's
// modification revision and skipped. A range nobody writes to would hold
// that revision back, so progress is requested every ProbeInterval: etcd
// answers all the stream's watches at once with the revision up to which
// it has sent them everything.
func (s *Source) watch(ctx context.Context, emit func([]objects.Change)) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ranges := objectRanges(s.cfg.Prefix)
	type tagged struct {
		i    int
		resp clientv3.WatchResponse
		ok   bool
	}
	responses := make(chan tagged)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i, r := range ranges {
		wch := s.cfg.Client.Watch(wctx, r.from, clientv3.WithRange(r.end), clientv3.WithRev(s.rev+1), clientv3.WithProgressNotify())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				resp, ok := <-wch
				select {
				case responses <- tagged{i, resp, ok}:
				case <-wctx.Done():
					return
				}
				if !ok {
					return
				}
			}
		}()
	}
	revs := make([]int64, len(ranges))
	for i := range revs {
		revs[i] = s.rev
	}
	progress := time.NewTicker(s.cfg.ProbeInterval)
	defer progress.Stop()
	for {
		var t tagged
		select {
		case t = <-responses:
		case <-progress.C:
			_ = s.cfg.Client.RequestProgress(wctx) // a failure shows as the watch's own error
			continue
		case <-ctx.Done():
			return ctx.Err()
		}
		if !t.ok {
			return ctx.Err()
		}
		if err := s.deliver(t.resp, emit); err != nil {
			return err
		}
		if rev := t.resp.Header.Revision; rev > revs[t.i] {
			revs[t.i] = rev
		}
		if low := slices.Min(revs); low > s.rev {
			s.setRev(low)
		}
	}
}

// deliver emits the changes of one watch response.
func (s *Source) deliver(resp clientv3.WatchResponse, emit func([]objects.Change)) error {
	if resp.CompactRevision != 0 {
		return rpctypes.ErrCompacted
	}
	if err := resp.Err(); err != nil {
		return err
	}
	s.setReachable(nil)
	s.cfg.Metrics.watchEvents(len(resp.Events))
	s.mu.Lock()
	s.events += len(resp.Events)
	s.mu.Unlock()
	var changes []objects.Change
	for _, ev := range resp.Events {
		k := string(ev.Kv.Key)
		if ownKey(s.cfg.Prefix, k) {
			continue
		}
		if ev.Type == clientv3.EventTypeDelete {
			changes = append(changes, s.remove(k)...)
		} else if e, ok := s.entries[k]; !ok || e.mod < ev.Kv.ModRevision {
			changes = append(changes, s.put(k, ev.Kv)...)
		}
	}
	s.publishProblems()
	if len(changes) > 0 {
		emit(changes)
	}
	return nil
}

// relist lists again, retrying until etcd answers, and emits the
// difference from what was emitted before.
func (s *Source) relist(ctx context.Context, emit func([]objects.Change)) {
	for ctx.Err() == nil {
		kvs, rev, err := s.list(ctx)
		if err == nil {
			if changes := s.replace(kvs, rev); len(changes) > 0 {
				emit(changes)
			}
			return
		}
		s.setReachable(err)
		select {
		case <-ctx.Done():
		case <-time.After(s.cfg.ProbeInterval):
		}
	}
}

func (s *Source) setRev(rev int64) {
	s.rev = rev
	s.seen.Store(rev)
	s.cfg.Metrics.revision(rev)
}

// retryable reports whether an error may go away by waiting: etcd down
// or without a leader, rather than a refusal such as bad credentials.
func retryable(err error) bool {
	switch {
	case errors.Is(err, rpctypes.ErrAuthFailed), errors.Is(err, rpctypes.ErrPermissionDenied),
		errors.Is(err, rpctypes.ErrInvalidAuthToken), errors.Is(err, rpctypes.ErrUserEmpty):
		return false
	}
	return true
}

// Problems returns what is wrong with the values that did not load, by
// key.
func (s *Source) Problems() []dirsource.Problem {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]dirsource.Problem, 0, len(s.problems))
	for _, p := range s.problems {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// WatchEvents returns how many events the watches delivered: object
// changes only, since the keys Switchyard writes are outside the ranges
// watched.
func (s *Source) WatchEvents() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events
}

// Lists returns how many times the source listed the prefix: once at the
// start, and once after each compaction it fell behind.
func (s *Source) Lists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// publishProblems counts the problems and logs each change: a value that
// no longer loads once, and again when it is fixed or removed.
func (s *Source) publishProblems() {
	s.mu.Lock()
	now := make(map[string]string, len(s.problems))
	for k, p := range s.problems {
		p.File, p.Line = "", 0 // the key is logged apart; a value's line is 1
		now[k] = strings.TrimPrefix(p.String(), ": ")
	}
	s.mu.Unlock()
	s.cfg.Metrics.invalid(len(now))
	changed := len(now) != len(s.logged)
	for k, msg := range now {
		if s.logged[k] != msg {
			changed = true
			s.log.Warn("etcd value not loaded", "key", k, "problem", msg)
		}
	}
	for k := range s.logged {
		if _, ok := now[k]; !ok {
			s.log.Info("etcd value loads again or is gone", "key", k)
		}
	}
	s.logged = now
	if changed && s.cfg.OnProblems != nil {
		s.cfg.OnProblems(s.problemsByObject(now))
	}
}

// problemsByObject keys the problems by the object their key names,
// leaving out keys that name none.
func (s *Source) problemsByObject(byKey map[string]string) map[objects.Key]string {
	out := make(map[objects.Key]string, len(byKey))
	for k, msg := range byKey {
		if ok, err := ParseKey(s.cfg.Prefix, k); err == nil {
			out[ok] = msg
		}
	}
	return out
}
