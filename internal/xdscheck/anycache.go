package xdscheck

import (
	"slices"
	"sync"

	"google.golang.org/protobuf/types/known/anypb"
)

// cleanAnys remembers the Anys inspect found nothing wrong in, by type URL
// and bytes, with the references found in them: the filters of every
// HTTP connection manager, the connection managers of a gRPC host's
// server listeners, a team's per-route settings repeat byte for byte
// across thousands of resources, and unpacking and validating each again
// is most of what inspecting them costs. What an Any holds is checked on
// its own (ValidateAll of the unpacked message, and of the Anys inside
// it), so the same bytes are clean wherever they are. A gRPC host's
// connection manager is remembered by its bytes with its route
// configuration's name left out too (maskRDS): each host's differs from
// the next by that name only. So is a server listener's, with its inline
// route configuration's and virtual host's names left out (maskInline).
var cleanAnys = &anyCache{limit: 8 << 20}

// anyCache is safe for concurrent use; it holds at most limit bytes of
// Anys, and starts over when full, keeping what repeats from then on.
type anyCache struct {
	mu     sync.RWMutex
	byType map[string]map[string][]Ref
	// byMasked holds the connection managers by maskRDS's key, each
	// with its references, the first being its route configuration's.
	byMasked map[string][]Ref
	// byInline holds the connection managers by maskInline's key, each
	// with its references, none of which is read from the names masked.
	byInline map[string][]Ref
	size     int
	limit    int
}

func (c *anyCache) get(a *anypb.Any) ([]Ref, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	refs, ok := c.byType[a.GetTypeUrl()][string(a.GetValue())]
	return refs, ok
}

func (c *anyCache) put(a *anypb.Any, refs []Ref) {
	n := len(a.GetTypeUrl()) + len(a.GetValue())
	if n > c.limit/64 {
		return // a large one is unlikely to repeat, and would crowd out many
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.makeRoom(n)
	byValue := c.byType[a.GetTypeUrl()]
	if byValue == nil {
		byValue = map[string][]Ref{}
		c.byType[a.GetTypeUrl()] = byValue
	}
	if _, ok := byValue[string(a.GetValue())]; !ok {
		byValue[string(a.GetValue())] = slices.Clip(slices.Clone(refs))
		c.size += n
	}
}

// makeRoom starts over when n more bytes would not fit. Callers hold mu.
func (c *anyCache) makeRoom(n int) {
	if c.size+n > c.limit || c.byType == nil {
		c.byType, c.byMasked, c.byInline, c.size = map[string]map[string][]Ref{}, map[string][]Ref{}, map[string][]Ref{}, 0
	}
}

// getMasked is get for a connection manager by maskRDS's key. The
// references are shared: the caller renames the first (its route
// configuration's) in its own copy.
func (c *anyCache) getMasked(key []byte) ([]Ref, bool) {
	return c.getKeyed(&c.byMasked, key)
}

// putMasked is put for a connection manager by maskRDS's key; refs[0]
// must be its route configuration's reference.
func (c *anyCache) putMasked(key []byte, refs []Ref) {
	c.putKeyed(&c.byMasked, key, refs)
}

// getInline is get for a connection manager by maskInline's key. The
// references are shared.
func (c *anyCache) getInline(key []byte) ([]Ref, bool) {
	return c.getKeyed(&c.byInline, key)
}

// getKeyed is the references held by key in *in, one of c's maps of
// masked keys, read under mu.
func (c *anyCache) getKeyed(in *map[string][]Ref, key []byte) ([]Ref, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	refs, ok := (*in)[string(key)]
	return refs, ok
}

// putInline is put for a connection manager by maskInline's key.
func (c *anyCache) putInline(key []byte, refs []Ref) {
	c.putKeyed(&c.byInline, key, refs)
}

// putKeyed puts refs by key in *in, one of c's maps of masked keys,
// read after makeRoom, which may start every map over.
func (c *anyCache) putKeyed(in *map[string][]Ref, key []byte, refs []Ref) {
	n := len(key)
	if n > c.limit/64 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.makeRoom(n)
	if _, ok := (*in)[string(key)]; !ok {
		(*in)[string(key)] = slices.Clip(slices.Clone(refs))
		c.size += n
	}
}

// ForgetClean empties the memo of clean Anys. Its worth is the repeats
// within one large build, thousands of resources sharing their filters;
// kept after it, it is megabytes that a later small build needs only a
// few entries of, which that build puts back as it inspects them.
func ForgetClean() { cleanAnys.reset() }

func (c *anyCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byType, c.byMasked, c.byInline, c.size = nil, nil, nil, 0
}

// CleanHeld is how many bytes of Anys the memo of clean Anys holds.
func CleanHeld() int {
	cleanAnys.mu.RLock()
	defer cleanAnys.mu.RUnlock()
	return cleanAnys.size
}
