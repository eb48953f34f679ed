package xdscache

import (
	"sort"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/types/known/anypb"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// sotwWatch is an open state-of-the-world request.
type sotwWatch struct {
	req *cache.Request
	sub cache.Subscription
	ch  chan cache.Response
}

// CreateWatch answers a state-of-the-world request now if the stream lacks
// something, or parks it until an update concerns it.
func (c *Cache) CreateWatch(req *cache.Request, sub cache.Subscription, ch chan cache.Response) (func(), error) {
	if gw, err := c.cacheFor(req.GetNode()); err != nil {
		return func() {}, err
	} else if gw != c {
		return gw.CreateWatch(req, sub, ch)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.stateFor(GroupOf(req.GetNode()), req.GetTypeUrl())
	if ts == nil {
		return func() {}, nil
	}
	if resp := ts.sotwResponse(req, sub, nil); resp != nil {
		ts.send(ch, resp)
		return func() {}, nil
	}
	w := &sotwWatch{req: req, sub: sub, ch: ch}
	ts.sotw[w] = struct{}{}
	return func() {
		c.mu.Lock()
		delete(ts.sotw, w)
		c.mu.Unlock()
	}, nil
}

// sotwResponse builds the response a stream needs, or nil when it is up to
// date. changed limits the check to the names an update touched; nil checks
// everything (a new or changed request).
func (t *typeState) sotwResponse(req *cache.Request, sub cache.Subscription, changed map[string]bool) cache.Response {
	returned := sub.ReturnedResources()
	if changed == nil && len(returned) == 0 && req.GetResponseNonce() == "" && req.GetVersionInfo() == t.version() {
		// A client reconnecting (to this or a restarted server) that already
		// holds exactly the current content: versions come from content,
		// so there is nothing to send.
		return nil
	}
	if !t.sotwNeeded(req, sub, changed) {
		return nil
	}
	names, next := t.sotwContent(sub, returned)
	resources := make([]*anypb.Any, 0, len(names))
	for _, n := range names {
		r, _ := t.lookup(n)
		resources = append(resources, r.Any)
	}
	return newSotwReply(&cache.PassthroughResponse{
		Request: req,
		DiscoveryResponse: &envoy_service_discovery_v3.DiscoveryResponse{
			VersionInfo: t.version(),
			TypeUrl:     t.typeURL,
			Resources:   resources,
		},
		ReturnedResources: next,
	}, names)
}

// sotwNeeded reports whether the stream must be answered.
func (t *typeState) sotwNeeded(req *cache.Request, sub cache.Subscription, changed map[string]bool) bool {
	returned := sub.ReturnedResources()
	changed = t.widen(changed)
	differs := func(name string) bool {
		r, exists := t.lookup(name)
		v, had := returned[name]
		switch {
		case exists:
			return !had || v != r.Version
		default:
			// A full-state type expresses a deletion by leaving it out.
			return had && fullState(t.typeURL)
		}
	}
	if changed != nil {
		for name := range changed {
			if inView(sub, name) && differs(name) {
				return true
			}
		}
		return false
	}
	if sub.IsWildcard() {
		for name := range t.resources.All() {
			if differs(name) {
				return true
			}
		}
	} else {
		for name := range sub.SubscribedResources() {
			if differs(name) {
				return true
			}
		}
	}
	for name := range returned {
		if differs(name) {
			return true
		}
	}
	// The first request of a stream for a wildcard or full-state type is
	// always answered, even with nothing, so the client can finish
	// initializing instead of waiting for a timeout.
	return req.GetResponseNonce() == "" && len(returned) == 0 && (sub.IsWildcard() || fullState(t.typeURL))
}

// sotwContent lists the resources to send, sorted, and the stream's
// returned resources after it receives them. A full-state type sends its
// whole view; other types send only what differs.
func (t *typeState) sotwContent(sub cache.Subscription, returned map[string]string) ([]string, map[string]string) {
	var names []string
	var next map[string]string
	if fullState(t.typeURL) {
		next = map[string]string{}
		t.eachInView(sub, func(name string, r *xdsres.Resource) {
			names = append(names, name)
			next[name] = r.Version
		})
	} else {
		next = cloneReturned(returned)
		t.eachInView(sub, func(name string, r *xdsres.Resource) {
			if v, had := returned[name]; !had || v != r.Version {
				names = append(names, name)
				next[name] = r.Version
			}
		})
		for name := range returned {
			if _, ok := t.lookup(name); !ok {
				delete(next, name)
			}
		}
	}
	sort.Strings(names)
	return names, next
}

// eachInView calls fn for every existing resource the stream subscribes to.
func (t *typeState) eachInView(sub cache.Subscription, fn func(string, *xdsres.Resource)) {
	if sub.IsWildcard() {
		for name, r := range t.resources.All() {
			fn(name, r)
		}
		return
	}
	for name := range sub.SubscribedResources() {
		if r, ok := t.lookup(name); ok {
			fn(name, r)
		}
	}
}

// send hands a response to a stream. The server drains the channel before
// it opens a new watch and every watch is answered at most once, so the
// channel always has room; dropping instead of blocking keeps a bug there
// from stalling every other stream behind the cache lock. A drop is never
// silent: the stream misses an update until its next request, so the
// cache's drop hook counts and logs it.
func (t *typeState) send(ch chan cache.Response, resp cache.Response) {
	select {
	case ch <- resp:
	default:
		t.drop(resp.GetRequest().GetNode())
	}
}

// drop reports a dropped response to the cache's hook.
func (t *typeState) drop(node *envoy_config_core_v3.Node) {
	if t.owner != nil && t.owner.dropped != nil {
		t.owner.dropped(t.group, node, t.typeURL)
	}
}
