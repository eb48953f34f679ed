package xdscache

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Acks records, for every open stream, which version of each resource its
// node acknowledged and which it rejected, with the client's error_detail.
// It is the data plane's half of an object's status (the Programmed
// condition, programmed.go): what Switchyard sent is in the cache, what
// each node did with it is only here.
//
// It learns from the server's callbacks: a response says what a stream
// was sent (its resources and versions, under the response's nonce); the
// next request with that nonce ACKs it, or NACKs it with an error_detail.
// Requests with another nonce say nothing about that response (stale, or
// a subscription change). Acks is safe for concurrent use.
type Acks struct {
	// mu guards streams; each stream's state has its own lock, so that
	// Evaluate never holds up every stream at once.
	mu      sync.Mutex
	streams map[streamKey]*streamAcks
	changed chan struct{}
}

// streamAcks is what one stream's node holds, per type.
type streamAcks struct {
	node  string
	group xdsres.Group
	// gateway is the gateway the node names, "" for none (gateways.go).
	gateway string
	mu      sync.Mutex
	types   map[string]*typeAcks
}

// typeAcks is one stream's state for one type.
type typeAcks struct {
	// wildcard streams hold every resource of the type; others only those
	// they subscribed to, which shows as having been sent them.
	wildcard bool
	// full marks a state-of-the-world type whose responses carry the
	// whole view (fullState): an ACK replaces acked instead of adding to
	// it, and the map is then shared with the response, never modified.
	full bool
	// acked holds the version of every resource the node acknowledged.
	acked map[string]string
	// currentAsOf is the type version a reconnecting client reported
	// holding before it was sent anything: it holds everything current
	// at that version (versions come from content).
	currentAsOf string
	// inflight is the last response, until a request answers it.
	inflight *sent
	// rejected holds the version a node rejected and why, until it
	// acknowledges another version.
	rejected map[string]Rejection
}

// sent is what one response carried.
type sent struct {
	nonce    string
	versions map[string]string
	removed  []string
}

// Rejection is a version of a resource a node rejected, and the
// error_detail of its NACK.
type Rejection struct {
	Version, Detail string
}

// NewAcks returns an empty record.
func NewAcks() *Acks {
	return &Acks{streams: map[streamKey]*streamAcks{}, changed: make(chan struct{}, 1)}
}

// Changed is signalled (coalesced) whenever a stream opens, closes, or
// answers a response.
func (a *Acks) Changed() <-chan struct{} { return a.changed }

func (a *Acks) signal() {
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

// lock returns a stream's state for a type, creating both as needed, with
// the stream's lock held; the caller calls unlock.
func (a *Acks) lock(k streamKey, node *envoy_config_core_v3.Node, g xdsres.Group, typeURL string) (ta *typeAcks, known bool, unlock func()) {
	a.mu.Lock()
	st := a.streams[k]
	if st == nil {
		st = &streamAcks{node: node.GetId(), group: g, gateway: GatewayOf(node), types: map[string]*typeAcks{}}
		a.streams[k] = st
	}
	a.mu.Unlock()
	st.mu.Lock()
	ta = st.types[typeURL]
	known = ta != nil
	if ta == nil {
		ta = &typeAcks{full: !k.delta && fullState(typeURL), acked: map[string]string{}}
		st.types[typeURL] = ta
	}
	return ta, known, st.mu.Unlock
}

// sotwRequest records what a state-of-the-world request says.
func (a *Acks) sotwRequest(k streamKey, g xdsres.Group, req *envoy_service_discovery_v3.DiscoveryRequest) {
	ta, _, unlock := a.lock(k, req.GetNode(), g, req.GetTypeUrl())
	defer unlock()
	names := req.GetResourceNames()
	ta.wildcard = slices.Contains(names, "*") || (len(names) == 0 && legacyWildcard(req.GetTypeUrl()))
	if req.GetResponseNonce() == "" && ta.inflight == nil && len(ta.acked) == 0 {
		ta.currentAsOf = req.GetVersionInfo()
	}
	a.answer(ta, req.GetResponseNonce(), req.GetErrorDetail().GetMessage(), req.GetErrorDetail() != nil)
}

// deltaRequest records what an incremental request says.
func (a *Acks) deltaRequest(k streamKey, g xdsres.Group, req *envoy_service_discovery_v3.DeltaDiscoveryRequest) {
	ta, known, unlock := a.lock(k, req.GetNode(), g, req.GetTypeUrl())
	defer unlock()
	sub, unsub := req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe()
	switch {
	case !known:
		ta.wildcard = slices.Contains(sub, "*") || (len(sub) == 0 && legacyWildcard(req.GetTypeUrl()))
		for n, v := range req.GetInitialResourceVersions() {
			ta.acked[n] = v
		}
	case slices.Contains(sub, "*"):
		ta.wildcard = true
	case slices.Contains(unsub, "*"):
		ta.wildcard = false
	}
	a.answer(ta, req.GetResponseNonce(), req.GetErrorDetail().GetMessage(), req.GetErrorDetail() != nil)
}

// answer applies an ACK or NACK of the response in flight, when the
// request answers it. Called with the stream's lock held.
func (a *Acks) answer(ta *typeAcks, nonce, detail string, nack bool) {
	in := ta.inflight
	if in == nil || nonce != in.nonce {
		return
	}
	ta.inflight = nil
	defer a.signal()
	if nack {
		ta.reject(in.versions, detail)
		return
	}
	ta.currentAsOf = ""
	if ta.full {
		ta.acked = in.versions
	} else {
		for n, v := range in.versions {
			ta.acked[n] = v
		}
		for _, n := range in.removed {
			delete(ta.acked, n)
		}
	}
	for n := range in.versions {
		delete(ta.rejected, n)
	}
}

// reject records a NACK of a response carrying versions. A NACK rejects a
// whole response, but only what the node did not hold already can be at
// fault, and when the error names some of those (Envoy's and grpc-go's
// both name the resources they reject) only they are.
func (ta *typeAcks) reject(versions map[string]string, detail string) {
	var changed, named []string
	for n, v := range versions {
		if ta.acked[n] != v {
			changed = append(changed, n)
			if strings.Contains(detail, n) {
				named = append(named, n)
			}
		}
	}
	if len(named) > 0 {
		changed = named
	}
	if ta.rejected == nil && len(changed) > 0 {
		ta.rejected = map[string]Rejection{}
	}
	for _, n := range changed {
		ta.rejected[n] = Rejection{Version: versions[n], Detail: detail}
	}
}

// sotwSent records a state-of-the-world response. out is what the cache
// attached to it (sotwReply); a response from elsewhere is ignored.
func (a *Acks) sotwSent(ctx context.Context, k streamKey, g xdsres.Group, req *envoy_service_discovery_v3.DiscoveryRequest, resp *envoy_service_discovery_v3.DiscoveryResponse) {
	out, _ := ctx.Value(sentKey{}).(*sotwSent)
	if out == nil {
		return
	}
	versions := out.returned
	if !fullState(resp.GetTypeUrl()) {
		versions = make(map[string]string, len(out.names))
		for _, n := range out.names {
			versions[n] = out.returned[n]
		}
	}
	ta, _, unlock := a.lock(k, req.GetNode(), g, resp.GetTypeUrl())
	defer unlock()
	ta.inflight = &sent{nonce: resp.GetNonce(), versions: versions}
}

// deltaSent records an incremental response.
func (a *Acks) deltaSent(k streamKey, g xdsres.Group, req *envoy_service_discovery_v3.DeltaDiscoveryRequest, resp *envoy_service_discovery_v3.DeltaDiscoveryResponse) {
	versions := make(map[string]string, len(resp.GetResources()))
	for _, r := range resp.GetResources() {
		versions[r.GetName()] = r.GetVersion()
	}
	ta, _, unlock := a.lock(k, req.GetNode(), g, resp.GetTypeUrl())
	defer unlock()
	ta.inflight = &sent{nonce: resp.GetNonce(), versions: versions, removed: resp.GetRemovedResources()}
}

// closed forgets a stream.
func (a *Acks) closed(k streamKey) {
	a.mu.Lock()
	_, had := a.streams[k]
	delete(a.streams, k)
	a.mu.Unlock()
	if had {
		a.signal()
	}
}

// sentKey is the context key of what a state-of-the-world response
// carries: go-control-plane hands the response's context to the
// callback, and nothing else says which resources a response holds
// without decoding them.
type sentKey struct{}

// sotwSent is what a state-of-the-world response carries: the names in
// it, and the versions the stream holds once it applies it.
type sotwSent struct {
	names    []string
	returned map[string]string
}

// sotwReply is a response that tells the callbacks what it carries.
type sotwReply struct {
	*cache.PassthroughResponse
	ctx context.Context
}

// GetContext implements cache.Response.
func (r *sotwReply) GetContext() context.Context { return r.ctx }

func newSotwReply(resp *cache.PassthroughResponse, names []string) cache.Response {
	ctx := context.WithValue(context.Background(), sentKey{}, &sotwSent{names: names, returned: resp.ReturnedResources})
	return &sotwReply{PassthroughResponse: resp, ctx: ctx}
}

// legacyWildcard reports whether an empty subscription to the type means
// every resource; Register turns that off for the named types.
func legacyWildcard(typeURL string) bool {
	return !slices.Contains(namedTypes, typeURL)
}
