package xdscache

import (
	"sort"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// deltaWatch is an open incremental request.
type deltaWatch struct {
	req *cache.DeltaRequest
	sub cache.Subscription
	ch  chan cache.DeltaResponse
}

// CreateDeltaWatch answers an incremental request now if the stream lacks
// something (comparing with the versions it reported it holds, on a new
// stream), or parks it until an update concerns it.
func (c *Cache) CreateDeltaWatch(req *cache.DeltaRequest, sub cache.Subscription, ch chan cache.DeltaResponse) (func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.stateFor(GroupOf(req.GetNode()), req.GetTypeUrl())
	if ts == nil {
		return func() {}, nil
	}
	if resp := ts.deltaResponse(req, sub, nil); resp != nil {
		sendDelta(ch, resp)
		return func() {}, nil
	}
	w := &deltaWatch{req: req, sub: sub, ch: ch}
	ts.delta[w] = struct{}{}
	return func() {
		c.mu.Lock()
		delete(ts.delta, w)
		c.mu.Unlock()
	}, nil
}

// deltaResponse builds the resources that differ from what the stream
// holds and the names it holds that no longer exist, or returns nil when
// there are none. changed limits the check to the names an update touched.
func (t *typeState) deltaResponse(req *cache.DeltaRequest, sub cache.Subscription, changed map[string]bool) cache.DeltaResponse {
	returned := sub.ReturnedResources()
	var updated, removed []string
	check := func(name string) {
		r, exists := t.resources[name]
		v, had := returned[name]
		switch {
		case exists && (!had || v != r.Version):
			updated = append(updated, name)
		case !exists && had:
			removed = append(removed, name)
		}
	}
	if changed != nil {
		for name := range changed {
			if inView(sub, name) {
				check(name)
			}
		}
	} else {
		t.eachInView(sub, func(name string, _ *Resource) { check(name) })
		for name := range returned {
			if _, exists := t.resources[name]; !exists {
				removed = append(removed, name)
			}
		}
	}
	// The first request of a wildcard stream is answered even when there
	// is nothing new, so the client can finish initializing.
	initial := req.GetResponseNonce() == "" && changed == nil && sub.IsWildcard()
	if len(updated) == 0 && len(removed) == 0 && !initial {
		return nil
	}
	return t.deltaBuild(req, returned, updated, removed)
}

func (t *typeState) deltaBuild(req *cache.DeltaRequest, returned map[string]string, updated, removed []string) cache.DeltaResponse {
	sort.Strings(updated)
	sort.Strings(removed)
	next := cloneReturned(returned)
	out := make([]*envoy_service_discovery_v3.Resource, 0, len(updated))
	for _, name := range updated {
		r := t.resources[name]
		next[name] = r.Version
		out = append(out, &envoy_service_discovery_v3.Resource{Name: name, Version: r.Version, Resource: r.Any})
	}
	for _, name := range removed {
		delete(next, name)
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
	}
}

func sendDelta(ch chan cache.DeltaResponse, resp cache.DeltaResponse) {
	select {
	case ch <- resp:
	default:
	}
}
