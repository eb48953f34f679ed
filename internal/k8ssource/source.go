// Package k8ssource is the Kubernetes source of Switchyard's objects: one
// client-go informer per kind (and per watched namespace) for HTTPProxy,
// ExtensionService, TLSCertificateDelegation, Service, EndpointSlice,
// Secret and Node, whose events become batches of objects.Change.
//
// Events only mark an object dirty; a batch reads the current version of
// every dirty object from the informers' caches. A burst of events to one
// object is one change, a batch never holds a version older than the
// cache, and an update that a build would not see (a status write, a Node
// heartbeat) is dropped. Secrets are passed on only while some object
// references them (secrets.go), Pods only while their namespace is in the
// mesh (meshpods.go).
package k8ssource

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Config configures a Source.
type Config struct {
	// REST is how to reach the API server.
	REST *rest.Config
	// Namespaces limits the namespaced kinds to these namespaces; empty
	// watches every namespace. Nodes are cluster-wide either way.
	Namespaces []string
	// Mesh also watches Namespaces, TrafficSplits and HTTPRouteGroups
	// (serve --mesh).
	Mesh bool
	// Secrets are passed on to builds whether or not an object references
	// them: the ones named by flags, such as serve --fallback-certificate,
	// which a proxy enables without naming.
	Secrets []types.NamespacedName
	Log     *slog.Logger
	// OnSynced, when set, is called once every informer has synced, before
	// Start turns what is left of their caches into changes: what follows
	// is the time to the first config that the source does not spend
	// waiting on the API server.
	OnSynced func()
}

// Source watches the API server. It implements server.Source.
type Source struct {
	log     *slog.Logger
	watches []*watch
	byKind  map[objects.Kind]map[string]*watch // by namespace, "" for all
	wake    chan struct{}
	mu      sync.Mutex
	dirty   map[objects.Key]struct{}
	// early are the objects of the informers' initial lists read before
	// the informers have them (early.go).
	early map[objects.Key]runtime.Object
	// earlyFrom is the decoded object each early one was made from,
	// which the informer's transform is handed again (early.go).
	earlyFrom map[objects.Key]runtime.Object
	kindInfo  map[objects.Kind]*kindInfo

	// Owned by the goroutine that calls Start, then Run.
	refs     *secretRefs
	emitted  map[objects.Key]runtime.Object
	started  bool
	onSynced func()
	// meshNS, with Config.Mesh, are the namespaces whose Pods reach
	// builds (meshpods.go).
	meshNS *meshNamespaces
}

// watch is one informer: one kind in one namespace (or all).
type watch struct {
	info      *kindInfo
	namespace string
	informer  cache.SharedIndexInformer
	synced    cache.InformerSynced
	// front is the greatest namespace of the objects its initial stream
	// has sent, streamed whether that stream has ended (s.mu; early.go).
	front    string
	streamed bool
}

// New prepares the informers; nothing talks to the API server until Start.
func New(cfg Config) (*Source, error) {
	if cfg.REST == nil {
		return nil, fmt.Errorf("k8ssource: no REST config")
	}
	s := &Source{
		log:       cfg.Log,
		byKind:    map[objects.Kind]map[string]*watch{},
		wake:      make(chan struct{}, 1),
		dirty:     map[objects.Key]struct{}{},
		early:     map[objects.Key]runtime.Object{},
		earlyFrom: map[objects.Key]runtime.Object{},
		kindInfo:  map[objects.Kind]*kindInfo{},
		refs:      newSecretRefs(cfg.Secrets...),
		emitted:   map[objects.Key]runtime.Object{},
		onSynced:  cfg.OnSynced,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	namespaces := []string{metav1.NamespaceAll}
	if len(cfg.Namespaces) > 0 {
		namespaces = slices.Compact(slices.Sorted(slices.Values(cfg.Namespaces)))
	}
	watched := kinds
	if cfg.Mesh {
		watched = append(slices.Clip(kinds), meshKinds...)
		s.meshNS = newMeshNamespaces()
	}
	for i := range watched {
		info := &watched[i]
		s.kindInfo[info.kind] = info
		client, err := RESTClient(cfg.REST, info.gv)
		if err != nil {
			return nil, fmt.Errorf("k8ssource: %s client: %w", info.kind, err)
		}
		s.byKind[info.kind] = map[string]*watch{}
		nss := namespaces
		if !info.namespaced {
			nss = []string{metav1.NamespaceAll}
		}
		for _, ns := range nss {
			w, err := s.newWatch(client, info, ns)
			if err != nil {
				return nil, err
			}
			s.watches = append(s.watches, w)
			s.byKind[info.kind][ns] = w
		}
	}
	return s, nil
}

func (s *Source) newWatch(client *rest.RESTClient, info *kindInfo, ns string) (*watch, error) {
	w := &watch{info: info, namespace: ns}
	lw := s.earlyListWatch(cache.NewListWatchFromClient(client, info.resource, ns, fields.Everything()), w)
	w.informer = cache.NewSharedIndexInformerWithOptions(lw, info.example, cache.SharedIndexInformerOptions{ObjectDescription: w.String()})
	if err := w.informer.SetTransform(s.transformOnce(info.kind)); err != nil {
		return nil, err
	}
	if err := w.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		s.log.Warn("watching the API server failed; retrying", "watch", w.String(), "error", err)
	}); err != nil {
		return nil, err
	}
	reg, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.mark(info.kind, obj) },
		UpdateFunc: func(_, obj any) { s.mark(info.kind, obj) },
		DeleteFunc: func(obj any) { s.mark(info.kind, obj) },
	})
	if err != nil {
		return nil, err
	}
	w.synced = reg.HasSynced
	return w, nil
}

func (w *watch) String() string {
	if w.namespace == "" {
		return w.info.resource
	}
	return w.info.resource + " in " + w.namespace
}

// mark notes that an object changed and wakes Run.
func (s *Source) mark(kind objects.Kind, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return
	}
	key, ok := keyOf(kind, ro)
	if !ok {
		return
	}
	s.mu.Lock()
	if !s.informed(key, obj) {
		s.dirty[key] = struct{}{}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start runs the informers until ctx is done and returns every object
// once all of them have synced.
func (s *Source) Start(ctx context.Context) ([]objects.Change, error) {
	return s.StartWarm(ctx, nil)
}

// WarmupInterval is how often StartWarm hands over what the informers
// listed since the last time: often enough that little is left when the
// last informer syncs, seldom enough that a batch holds many objects, so
// that a root is rebuilt once for its Services rather than once for each.
const WarmupInterval = 200 * time.Millisecond

// StartWarm is Start, passing the objects the informers list to warm (when
// not nil) at most every WarmupInterval while they do, so that they are
// built before the informers sync; it returns the changes listed since the
// last batch. It implements server.WarmSource.
func (s *Source) StartWarm(ctx context.Context, warm func([]objects.Change)) ([]objects.Change, error) {
	if s.started {
		return nil, fmt.Errorf("k8ssource: Start called twice")
	}
	s.started = true
	start := time.Now()
	for _, w := range s.watches {
		go w.informer.RunWithContext(ctx)
	}
	// The informers are watched apart from the batches, so that OnSynced
	// tells when they synced even while a batch is being built.
	synced := make(chan error, 1)
	go func() { synced <- s.waitSynced(ctx, start) }()
	var batches <-chan time.Time
	if warm != nil {
		tick := time.NewTicker(WarmupInterval)
		defer tick.Stop()
		batches = tick.C
	}
	for {
		select {
		case err := <-synced:
			if err != nil {
				return nil, err
			}
			s.dropEarly()
			changes := s.take()
			s.log.Info("informers synced", "objects", len(s.emitted), "informers", len(s.watches), "duration", time.Since(start).Round(time.Millisecond))
			return changes, nil
		case <-batches:
			if b := s.take(); len(b) > 0 {
				warm(b)
			}
		}
	}
}

// waitSynced returns once every informer has synced, calling OnSynced
// then, or with an error when ctx ends first.
func (s *Source) waitSynced(ctx context.Context, start time.Time) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	nextNote := start.Add(10 * time.Second)
	for {
		var waiting []string
		for _, w := range s.watches {
			if !w.synced() {
				waiting = append(waiting, w.String())
			}
		}
		if len(waiting) == 0 {
			break
		}
		if now := time.Now(); now.After(nextNote) {
			s.log.Warn("still waiting for informers to sync; is the API server reachable, and does RBAC let us list and watch these?", "waiting", strings.Join(waiting, ", "), "for", now.Sub(start).Round(time.Second))
			nextNote = now.Add(30 * time.Second)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("informers did not sync (waiting for %s): %w", strings.Join(waiting, ", "), ctx.Err())
		case <-tick.C:
		}
	}
	if s.onSynced != nil {
		s.onSynced()
	}
	return nil
}

// Run delivers batches of changes until ctx is done.
func (s *Source) Run(ctx context.Context, emit func([]objects.Change)) error {
	if !s.started {
		return fmt.Errorf("k8ssource: Run called before Start")
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
			if b := s.take(); len(b) > 0 {
				emit(b)
			}
		}
	}
}

// Get returns the cached version of an object (status included), nil
// when it does not exist or is not watched. It is safe for concurrent
// use; the object must not be modified.
func (s *Source) Get(key objects.Key) runtime.Object {
	ws := s.byKind[key.Kind]
	w := ws[metav1.NamespaceAll]
	if w == nil {
		w = ws[key.Namespace]
	}
	if w == nil {
		return nil
	}
	id := key.Name
	if key.Namespace != "" {
		id = key.Namespace + "/" + key.Name
	}
	obj, ok, err := w.informer.GetIndexer().GetByKey(id)
	if err != nil || !ok {
		return nil
	}
	ro, _ := obj.(runtime.Object)
	return ro
}

// take turns the dirty objects into changes. Objects that reference
// Secrets go first, so that a Secret they start or stop referencing is
// added or removed in the same batch.
func (s *Source) take() []objects.Change {
	s.mu.Lock()
	dirty := s.dirty
	s.dirty = map[objects.Key]struct{}{}
	s.mu.Unlock()
	s.updateMeshNamespaces(dirty)

	keys := make([]objects.Key, 0, len(dirty))
	var later []objects.Key
	for k := range dirty {
		if s.waitsForServices(k) {
			later = append(later, k)
			continue
		}
		keys = append(keys, k)
	}
	if len(later) > 0 {
		s.mu.Lock()
		for _, k := range later {
			s.dirty[k] = struct{}{}
		}
		s.mu.Unlock()
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	var out []objects.Change
	secrets := map[objects.Key]bool{}
	for _, k := range keys {
		if k.Kind == objects.KindSecret {
			secrets[k] = true
			continue
		}
		obj := s.lookup(k)
		if k.Kind == objects.KindPod && !s.podInMesh(k.Namespace) {
			obj = nil
		}
		out = s.diff(k, obj, out)
		switch k.Kind {
		case objects.KindHTTPProxy, objects.KindExtensionService, objects.KindTLSCertificateDelegation:
			var refs []types.NamespacedName
			if obj != nil {
				refs = secretsOf(obj)
			}
			for _, nn := range s.refs.set(k, refs) {
				secrets[objects.NewKey(objects.KindSecret, nn)] = true
			}
		}
	}
	sk := make([]objects.Key, 0, len(secrets))
	for k := range secrets {
		sk = append(sk, k)
	}
	sort.Slice(sk, func(i, j int) bool { return sk[i].Less(sk[j]) })
	for _, k := range sk {
		var obj runtime.Object
		if s.refs.referenced(k.NamespacedName()) {
			obj = s.lookup(k)
		}
		out = s.diff(k, obj, out)
	}
	return out
}

// diff appends the change that brings builds from what was last emitted
// for key to obj (nil: absent), if a build would see one.
func (s *Source) diff(key objects.Key, obj runtime.Object, out []objects.Change) []objects.Change {
	prev, had := s.emitted[key]
	switch {
	case obj == nil && had:
		delete(s.emitted, key)
		return append(out, objects.Change{Key: key})
	case obj == nil, had && prev == obj:
		return out
	case had && s.kindInfo[key.Kind].same(prev, obj):
		s.emitted[key] = obj
		return out
	}
	s.emitted[key] = obj
	return append(out, objects.Change{Key: key, Object: obj})
}
