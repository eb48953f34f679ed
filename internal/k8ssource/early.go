package k8ssource

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8swatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Early objects. An informer hands its handlers nothing of its initial
// list until the whole of it has arrived: with the API server's streaming
// lists (client-go's WatchListClient, on by default), the reflector
// collects the stream's objects in a store of its own and replaces the
// cache with it at the stream's end. At 10,000 roots that is tens of
// seconds, and everything would be built after it. So the source reads
// the stream too, as it arrives: each object of the initial events is
// transformed as it is decoded, before the reflector sees it, and kept
// as early until the informer's own Add event for it comes, so that
// StartWarm builds it while the rest streams. Nothing writes the object
// after that: the informer's transform (transformOnce) skips the early
// objects, which it would otherwise transform again as they pass its
// stores, while a build reads them.
//
// A list (the API server or client without streaming lists) arrives
// whole in one response, and is left to the informer: only streams are
// read early.

// earlyListWatch is w's lw, with the initial events of its streaming
// lists handed to the source as they arrive.
func (s *Source) earlyListWatch(lw *cache.ListWatch, w *watch) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: lw.ListWithContextFunc,
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (k8swatch.Interface, error) {
			stream, err := lw.WatchFuncWithContext(ctx, opts)
			if err != nil || opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
				return stream, err
			}
			initial := true
			return k8swatch.Filter(stream, func(ev k8swatch.Event) (k8swatch.Event, bool) {
				switch {
				case !initial:
				case ev.Type == k8swatch.Added:
					s.handOver(w, ev.Object)
				case ev.Type == k8swatch.Bookmark:
					if m, err := meta.Accessor(ev.Object); err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
						initial = false
						s.mu.Lock()
						w.streamed = true
						s.mu.Unlock()
					}
				}
				return ev, true
			}), nil
		},
		DisableChunking: lw.DisableChunking,
	}
}

// handOver transforms an object of w's initial events and keeps it as
// early, for the next batch.
func (s *Source) handOver(w *watch, obj runtime.Object) {
	key, ok := keyOf(w.info.kind, obj)
	if !ok {
		return
	}
	t, err := s.trim(obj)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.early[key] = t.(runtime.Object)
	s.earlyFrom[key] = obj
	s.dirty[key] = struct{}{}
	w.front = max(w.front, key.Namespace)
	s.mu.Unlock()
}

// waitsForServices reports whether a batch had better leave an object for
// a later one: an HTTPProxy whose namespace's Services are still
// streaming. A root is built again whenever one of its Services arrives,
// and at 10,000 roots the HTTPProxies' stream ends well before the
// Services': built as they arrive, most roots would be built twice. The
// API server streams a kind's initial events in key order, so once the
// Services' stream has gone past a namespace, its Services are all in.
// Should the order be another, nothing is lost but that saving: every
// object goes out once the Services have synced.
func (s *Source) waitsForServices(k objects.Key) bool {
	if k.Kind != objects.KindHTTPProxy {
		return false
	}
	w := s.byKind[objects.KindService][metav1.NamespaceAll]
	if w == nil {
		w = s.byKind[objects.KindService][k.Namespace]
	}
	if w == nil || w.synced() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !w.streamed && w.front <= k.Namespace
}

// transformOnce is the informers' transform: it leaves the objects
// transformed early as they are, since a build may be reading them, and
// hands over the early form of an object it was made from (a Service's
// or an EndpointSlice's is another object).
func (s *Source) transformOnce(kind objects.Kind) cache.TransformFunc {
	return func(obj any) (any, error) {
		if ro, ok := obj.(runtime.Object); ok {
			if key, ok := keyOf(kind, ro); ok {
				s.mu.Lock()
				early, ok := s.early[key]
				ok = ok && (early == ro || s.earlyFrom[key] == ro)
				s.mu.Unlock()
				if ok {
					return early, nil
				}
			}
		}
		return s.trim(obj)
	}
}

// informed is called with every object an informer's handlers receive:
// an early object is then in the informer's cache, and no longer early.
// It reports whether obj was early, when it is already marked dirty.
func (s *Source) informed(key objects.Key, obj any) bool {
	if e, ok := s.early[key]; ok && any(e) == obj {
		delete(s.early, key)
		delete(s.earlyFrom, key)
		return true
	}
	return false
}

// lookup returns the current version of an object: the informer's, or
// the early one while the informer does not have it yet.
func (s *Source) lookup(key objects.Key) runtime.Object {
	if obj := s.Get(key); obj != nil {
		return obj
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.early[key]
}

// dropEarly forgets what is still early once every informer has synced:
// objects of a stream that broke off and was listed again, which may
// since have been deleted. They are marked dirty, so that the next batch
// reads them from the informers' caches alone.
func (s *Source) dropEarly() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.early {
		s.dirty[key] = struct{}{}
	}
	clear(s.early)
	clear(s.earlyFrom)
}

func keyOf(kind objects.Kind, obj runtime.Object) (objects.Key, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return objects.Key{}, false
	}
	return objects.Key{Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}, true
}
