package xdscache

import (
	"reflect"
	"sort"
	"unsafe"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// changeLog numbers a type's changes and remembers the names of the last
// maxLogged of them.
//
// It lets a delta stream's next watch — opened by the request that ACKs a
// response — check only the names changed since that response, where it
// would otherwise compare every resource the stream subscribes to: an
// Envoy subscribes to every cluster's load assignment, and ACKs every
// response. The generation a stream is current with travels from a watch
// to the next through a handoff (see typeState.handoff).
type changeLog struct {
	generation uint64
	// entries are the last changes, oldest first; every change after
	// oldest is among them.
	entries []logEntry
	oldest  uint64
}

type logEntry struct {
	generation uint64
	name       string
}

// maxLogged bounds the log: a stream further behind is checked in full.
const maxLogged = 4096

func (l *changeLog) add(name string) {
	l.generation++
	l.entries = append(l.entries, logEntry{l.generation, name})
	if len(l.entries) > 2*maxLogged {
		keep := l.entries[len(l.entries)-maxLogged:]
		l.entries = append(make([]logEntry, 0, 2*maxLogged), keep...)
		l.oldest = l.entries[0].generation - 1
	}
}

// since returns the names that may differ from what a stream current with
// generation g holds: those changed since, and those its request
// subscribes to or unsubscribes from. ok is false when that cannot be told
// (an explicit wildcard, a stream too far behind): everything must be
// checked.
func (l *changeLog) since(g uint64, req *cache.DeltaRequest) (map[string]bool, bool) {
	if g < l.oldest || g > l.generation {
		return nil, false
	}
	names := map[string]bool{}
	for _, list := range [][]string{req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe()} {
		for _, n := range list {
			if n == "*" {
				return nil, false
			}
			names[n] = true
		}
	}
	first := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].generation > g })
	for _, e := range l.entries[first:] {
		names[e.name] = true
	}
	return names, true
}

// handoff is the generation a delta stream's returned resources were
// current with when its watch was cancelled (go-control-plane cancels it
// just before it opens the next one, for the stream's next request), and
// the cache epoch it was left in, so that one left by a stream that closed
// is dropped soon.
type handoff struct {
	generation, epoch uint64
}

// subscriptionKey identifies a delta stream's subscription by its
// returned-resources map, which is the stream's own and is updated in
// place (see deltaBuild). Holding the pointer keeps the map alive, so it
// cannot be reused for another stream while a handoff names it.
func subscriptionKey(returned map[string]string) unsafe.Pointer {
	if returned == nil {
		return nil
	}
	return reflect.ValueOf(returned).UnsafePointer()
}

// leave records a stream's generation for its next watch.
func (t *typeState) leave(key unsafe.Pointer, generation, epoch uint64) {
	if key != nil {
		t.handoff[key] = handoff{generation, epoch}
	}
}

// take removes and returns what a stream's last watch left, for a request
// that follows a response (a new stream's first request must be checked in
// full: its map comes from the client).
func (t *typeState) take(key unsafe.Pointer, req *cache.DeltaRequest) (uint64, bool) {
	if key == nil {
		return 0, false
	}
	h, ok := t.handoff[key]
	delete(t.handoff, key)
	return h.generation, ok && req.GetResponseNonce() != ""
}

// dropStale forgets handoffs no watch took for two epochs: their streams
// closed.
func (t *typeState) dropStale(epoch uint64) {
	for k, h := range t.handoff {
		if h.epoch+2 <= epoch {
			delete(t.handoff, k)
		}
	}
}
