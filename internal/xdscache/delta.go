package xdscache

import (
	"sort"
	"unsafe"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// deltaWatch is an open incremental request: parked, or answered and
// waiting for go-control-plane to cancel it when the stream's next request
// comes. key and generation are what it hands the next watch (see
// changeLog).
type deltaWatch struct {
	req        *cache.DeltaRequest
	sub        cache.Subscription
	ch         chan cache.DeltaResponse
	key        unsafe.Pointer
	generation uint64
}

// CreateDeltaWatch answers an incremental request now if the stream lacks
// something (comparing with the versions it reported it holds, on a new
// stream), or parks it until an update concerns it.
func (c *Cache) CreateDeltaWatch(req *cache.DeltaRequest, sub cache.Subscription, ch chan cache.DeltaResponse) (func(), error) {
	if gw, err := c.cacheFor(req.GetNode()); err != nil {
		return func() {}, err
	} else if gw != c {
		return gw.CreateDeltaWatch(req, sub, ch)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.stateFor(GroupOf(req.GetNode()), req.GetTypeUrl())
	if ts == nil {
		return func() {}, nil
	}
	var changed map[string]bool
	key := subscriptionKey(sub.ReturnedResources())
	if g, ok := ts.take(key, req); ok {
		// A stream this cache answered before: only what changed since.
		changed, _ = ts.changes.since(g, req)
	}
	w := &deltaWatch{req: req, sub: sub, ch: ch, key: key, generation: ts.changes.generation}
	cancel := func() {
		c.mu.Lock()
		delete(ts.delta, w)
		ts.leave(w.key, w.generation, c.epoch)
		c.mu.Unlock()
	}
	resp, undo := ts.deltaResponse(req, sub, changed)
	if resp == nil {
		ts.delta[w] = struct{}{}
		return cancel, nil
	}
	if !ts.sendDelta(ch, resp) {
		undo()
		w.key = nil
		return cancel, nil
	}
	w.key = subscriptionKey(resp.GetNextVersionMap())
	return cancel, nil
}

// deltaResponse builds the resources that differ from what the stream
// holds and the names it holds that no longer exist, or returns nil when
// there are none. changed limits the check to the names an update touched;
// nil checks everything the stream subscribes to (a watch opened without a
// known generation). The stream's returned-resources map is updated in
// place (see deltaBuild); undo restores it when the response is not sent
// after all.
func (t *typeState) deltaResponse(req *cache.DeltaRequest, sub cache.Subscription, changed map[string]bool) (cache.DeltaResponse, func()) {
	changed = t.widen(changed)
	full := changed == nil
	returned := sub.ReturnedResources()
	var updated, removed []string
	check := func(name string) {
		r, exists := t.lookup(name)
		v, had := returned[name]
		switch {
		case exists && (!had || v != r.Version):
			updated = append(updated, name)
		case !exists && had:
			removed = append(removed, name)
		}
	}
	if !full {
		for name := range changed {
			if inView(sub, name) {
				check(name)
			}
		}
	} else {
		t.eachInView(sub, func(name string, _ *xdsres.Resource) { check(name) })
		for name := range returned {
			if _, exists := t.lookup(name); !exists {
				removed = append(removed, name)
			}
		}
	}
	// The first request of a wildcard stream is answered even when there
	// is nothing new, so the client can finish initializing.
	initial := req.GetResponseNonce() == "" && full && sub.IsWildcard()
	if len(updated) == 0 && len(removed) == 0 && !initial {
		return nil, func() {}
	}
	return t.deltaBuild(req, returned, updated, removed)
}

// deltaBuild builds the response and the stream's next returned resources.
//
// The next map is the stream's own map, updated in place, not a copy: a
// copy costs what the stream holds (for an Envoy, every cluster's load
// assignment) on every response, where the update costs what changed.
// That is safe because go-control-plane's delta server sends every
// response it is handed before it reads or changes the subscription again
// (it processes pending responses before each request, and cancels the
// watch, which takes the cache's lock, before changing subscriptions), and
// stores exactly this map as the stream's returned resources. The returned
// undo restores the map for a response that is not sent.
func (t *typeState) deltaBuild(req *cache.DeltaRequest, returned map[string]string, updated, removed []string) (cache.DeltaResponse, func()) {
	sort.Strings(updated)
	sort.Strings(removed)
	next := returned
	if next == nil {
		next = map[string]string{}
	}
	type prior struct {
		name, version string
		had           bool
	}
	undo := make([]prior, 0, len(updated)+len(removed))
	out := make([]*envoy_service_discovery_v3.Resource, 0, len(updated))
	for _, name := range updated {
		r, _ := t.lookup(name)
		v, had := next[name]
		undo = append(undo, prior{name, v, had})
		next[name] = r.Version
		out = append(out, &envoy_service_discovery_v3.Resource{Name: name, Version: r.Version, Resource: r.Any})
	}
	for _, name := range removed {
		v, had := next[name]
		undo = append(undo, prior{name, v, had})
		delete(next, name)
	}
	restore := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			if p := undo[i]; p.had {
				next[p.name] = p.version
			} else {
				delete(next, p.name)
			}
		}
	}
	return &cache.DeltaPassthroughResponse{
		DeltaRequest:   req,
		NextVersionMap: next,
		DeltaDiscoveryResponse: &envoy_service_discovery_v3.DeltaDiscoveryResponse{
			TypeUrl:           t.typeURL,
			SystemVersionInfo: t.version(),
			Resources:         out,
			RemovedResources:  removed,
		},
	}, restore
}

// sendDelta hands a response to a stream and reports whether it could;
// see send.
func (t *typeState) sendDelta(ch chan cache.DeltaResponse, resp cache.DeltaResponse) bool {
	select {
	case ch <- resp:
		return true
	default:
		t.drop(resp.GetDeltaRequest().GetNode())
		return false
	}
}
