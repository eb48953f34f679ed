package xdscache

import (
	"context"
	"errors"
	"maps"
	"sort"
	"strconv"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Cache is the set of resources of every group, with the open watches of
// every connected stream. It implements go-control-plane's cache.Cache.
//
// A watch is answered once and then removed: the server opens a new one
// with the next request. Whether to answer is decided by comparing current
// versions with what the stream was last sent (the subscription's returned
// resources), never with the version a request reports — after a NACK the
// client reports the old version, and comparing with it would resend the
// rejected config in a tight loop (go-control-plane issue 962).
type Cache struct {
	mu     sync.Mutex
	groups map[xdsres.Group]map[string]*typeState
	// epoch counts updates, to age handoffs.
	epoch uint64
	// gw holds the caches of further gateways (gateways.go).
	gw gateways
	// dropped, when set, hears of every response a stream's buffer had no
	// room for; it is called with mu held.
	dropped func(g xdsres.Group, node *envoy_config_core_v3.Node, typeURL string)
}

var _ cache.Cache = (*Cache)(nil)

// typeState is one group's resources of one type and the watches on them.
type typeState struct {
	owner     *Cache
	group     xdsres.Group
	typeURL   string
	resources *xdsres.Set
	// setHash is an order-independent hash of every (name, version),
	// updated in O(1) per change; it is the type's version.
	setHash uint64
	sotw    map[*sotwWatch]struct{}
	delta   map[*deltaWatch]struct{}
	// changes logs the last changes (see changeLog), so that a delta
	// stream's next watch checks what changed since its last response
	// instead of everything it subscribes to; handoff carries each
	// stream's generation from a watch to the next.
	changes changeLog
	handoff map[unsafe.Pointer]handoff
	// wildcardAliases answers names only a wildcard listener serves (see
	// lookup); aliases holds those built.
	wildcardAliases bool
	aliases         map[string]aliasEntry
}

// New returns an empty cache.
func New() *Cache {
	c := &Cache{groups: map[xdsres.Group]map[string]*typeState{}}
	for _, g := range xdsres.Groups {
		c.groups[g] = map[string]*typeState{}
		for t := range xdsres.AllowedTypes[g] {
			c.groups[g][t] = &typeState{
				owner:     c,
				group:     g,
				typeURL:   t,
				resources: xdsres.NewSet(0),
				sotw:      map[*sotwWatch]struct{}{},
				delta:     map[*deltaWatch]struct{}{},
				handoff:   map[unsafe.Pointer]handoff{},

				wildcardAliases: g == xdsres.GroupGRPC && t == resource.ListenerType,
			}
		}
	}
	return c
}

func (t *typeState) version() string { return strconv.FormatUint(t.setHash, 16) }

func entryHash(name, version string) uint64 {
	d := xxhash.New()
	_, _ = d.WriteString(name)
	_, _ = d.WriteString("\x00")
	_, _ = d.WriteString(version)
	return d.Sum64()
}

// Update applies changes to one group atomically and pushes what changed
// to the streams that watch it. A change whose version equals the current
// one is dropped. Types outside the group's allowed set are an error and
// nothing is applied.
func (c *Cache) Update(g xdsres.Group, changes []xdsres.Change) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	types, ok := c.groups[g]
	if !ok {
		return errors.New("xdscache: unknown group " + string(g))
	}
	for _, ch := range changes {
		if types[ch.TypeURL] == nil {
			return errors.New("xdscache: group " + string(g) + " does not serve " + ch.TypeURL)
		}
	}
	c.epoch++
	for _, ts := range types {
		ts.dropStale(c.epoch)
	}
	perType := reserveFirst(types, changes)
	changed := map[string]map[string]bool{}
	for _, ch := range changes {
		if types[ch.TypeURL].apply(ch) {
			if changed[ch.TypeURL] == nil {
				changed[ch.TypeURL] = make(map[string]bool, perType[ch.TypeURL])
			}
			changed[ch.TypeURL][ch.Name] = true
		}
	}
	for _, t := range xdsres.TypeOrder {
		if names := changed[t]; len(names) > 0 {
			types[t].notify(names)
		}
	}
	return nil
}

// largeUpdate is the number of changes from which an update sizes its
// lists of what changed: below it, counting costs more than growing.
const largeUpdate = 1024

// reserveFirst sizes the sets of the types that hold nothing yet for what
// changes add to them: a first build adds tens of thousands of one type,
// which would otherwise fill and copy the table over and over. It returns
// how many changes each type has, which sizes the lists of what changed,
// for an update large enough for it to matter (nil otherwise).
func reserveFirst(types map[string]*typeState, changes []xdsres.Change) map[string]int {
	var perType map[string]int
	if len(changes) >= largeUpdate {
		perType = map[string]int{}
	}
	adds := map[string]int{}
	for _, ch := range changes {
		if perType != nil {
			perType[ch.TypeURL]++
		}
		if ch.Resource != nil && types[ch.TypeURL].resources.Len() == 0 {
			adds[ch.TypeURL]++
		}
	}
	for t, n := range adds {
		types[t].resources.Reserve(n)
	}
	return perType
}

// apply records one change and reports whether it changed anything.
func (t *typeState) apply(ch xdsres.Change) bool {
	h := xdsres.Hash(ch.Name)
	old, had := t.resources.LookupHashed(ch.Name, h)
	if ch.Resource == nil {
		if !had {
			return false
		}
		t.resources.DeleteHashed(ch.Name, h)
		t.setHash ^= entryHash(ch.Name, old.Version)
		t.changes.add(ch.Name)
		return true
	}
	if had && old.Version == ch.Resource.Version {
		return false
	}
	if had {
		t.setHash ^= entryHash(ch.Name, old.Version)
	}
	t.resources.PutHashed(ch.Name, h, ch.Resource)
	t.setHash ^= entryHash(ch.Name, ch.Resource.Version)
	t.changes.add(ch.Name)
	return true
}

// Replace sets the complete resources of the given types of one group,
// deleting what is not listed, and pushes the difference. Types not listed
// keep their resources.
func (c *Cache) Replace(g xdsres.Group, byType map[string][]*xdsres.Resource) error {
	c.mu.Lock()
	types := c.groups[g]
	var changes []xdsres.Change
	for t, rs := range byType {
		ts := types[t]
		if ts == nil {
			c.mu.Unlock()
			return errors.New("xdscache: group " + string(g) + " does not serve " + t)
		}
		keep := make(map[string]bool, len(rs))
		for _, r := range rs {
			keep[r.Name] = true
			if old, ok := ts.resources.Lookup(r.Name); !ok || old.Version != r.Version {
				changes = append(changes, xdsres.Change{TypeURL: t, Name: r.Name, Resource: r})
			}
		}
		for name := range ts.resources.All() {
			if !keep[name] {
				changes = append(changes, xdsres.Change{TypeURL: t, Name: name})
			}
		}
	}
	c.mu.Unlock()
	return c.Update(g, changes)
}

// Resources returns a group's resources of one type, sorted by name.
func (c *Cache) Resources(g xdsres.Group, typeURL string) []*xdsres.Resource {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.groups[g][typeURL]
	if ts == nil {
		return nil
	}
	out := make([]*xdsres.Resource, 0, ts.resources.Len())
	for _, r := range ts.resources.All() {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Version returns the current version of a group's type.
func (c *Cache) Version(g xdsres.Group, typeURL string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ts := c.groups[g][typeURL]; ts != nil {
		return ts.version()
	}
	return ""
}

// notify answers every watch that one of the changed names concerns.
func (t *typeState) notify(changed map[string]bool) {
	for w := range t.sotw {
		if resp := t.sotwResponse(w.req, w.sub, changed); resp != nil {
			delete(t.sotw, w)
			t.send(w.ch, resp)
		}
	}
	for w := range t.delta {
		resp, undo := t.deltaResponse(w.req, w.sub, changed)
		if resp != nil {
			delete(t.delta, w)
			if !t.sendDelta(w.ch, resp) {
				undo()
				continue
			}
			w.key = subscriptionKey(resp.GetNextVersionMap())
		}
		// Answered or not, the stream is now current.
		w.generation = t.changes.generation
	}
}

// OnDropped sets what hears of a response dropped because a stream's
// buffer was full (see send); Register counts and logs them. fn is called
// with the cache's lock held and must not call back into the cache.
func (c *Cache) OnDropped(fn func(g xdsres.Group, node *envoy_config_core_v3.Node, typeURL string)) {
	c.mu.Lock()
	c.dropped = fn
	subs := make([]*Cache, 0, len(c.gw.byName))
	for _, sub := range c.gw.byName {
		subs = append(subs, sub)
	}
	c.mu.Unlock()
	// A further gateway's streams are the same server's streams.
	for _, sub := range subs {
		sub.OnDropped(fn)
	}
}

// Fetch is not supported: Switchyard serves streams only.
func (c *Cache) Fetch(context.Context, *cache.Request) (cache.Response, error) {
	return nil, errors.New("xdscache: REST fetch is not supported; use a gRPC stream")
}

// stateFor returns the state a node's stream reads, or nil when its group
// does not receive the type (a gRPC client asking for Secrets, say).
func (c *Cache) stateFor(g xdsres.Group, typeURL string) *typeState {
	return c.groups[g][typeURL]
}

// inView reports whether a stream should hold the named resource.
func inView(sub cache.Subscription, name string) bool {
	if sub.IsWildcard() {
		return true
	}
	_, ok := sub.SubscribedResources()[name]
	return ok
}

// cloneReturned copies a stream's returned-resources map: the server owns
// the original, and maps.Clone copies a map far faster than re-inserting.
func cloneReturned(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
