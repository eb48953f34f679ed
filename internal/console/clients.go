package console

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Clients records the xDS streams open now, and for each type what the
// stream was last sent, the version its node last acknowledged and the
// one it last rejected, with the rejection's error. It learns this by
// watching the messages of each stream (StreamInterceptor), so it needs
// nothing from the server beyond being installed. Safe for concurrent use.
type Clients struct {
	mu      sync.Mutex
	next    int64
	streams map[int64]*stream
}

// NewClients returns an empty record.
func NewClients() *Clients { return &Clients{streams: map[int64]*stream{}} }

type stream struct {
	id        int64
	method    string
	node      *envoy_config_core_v3.Node
	connected time.Time
	types     map[string]*typeVersions
	// nonces maps a response's nonce to the version it carried, for the
	// type it carried, so a NACK names the version it rejects.
	nonces map[string]string
}

type typeVersions struct {
	Type     string `json:"type"`
	Sent     string `json:"sent,omitempty"`
	Acked    string `json:"acked,omitempty"`
	Rejected string `json:"rejected,omitempty"`
	Error    string `json:"error,omitempty"`
}

// StreamInterceptor is a gRPC stream interceptor that records every xDS
// stream the server handles.
func (cs *Clients) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !strings.Contains(info.FullMethod, "envoy.service.") {
		return handler(srv, ss)
	}
	cs.mu.Lock()
	cs.next++
	st := &stream{id: cs.next, method: info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:], connected: time.Now(), types: map[string]*typeVersions{}, nonces: map[string]string{}}
	cs.streams[st.id] = st
	cs.mu.Unlock()
	defer func() {
		cs.mu.Lock()
		delete(cs.streams, st.id)
		cs.mu.Unlock()
	}()
	return handler(srv, &watched{ServerStream: ss, cs: cs, st: st})
}

// watched is a server stream whose messages update Clients.
type watched struct {
	grpc.ServerStream
	cs *Clients
	st *stream
}

func (w *watched) RecvMsg(m any) error {
	err := w.ServerStream.RecvMsg(m)
	if err == nil {
		w.cs.received(w.st, m)
	}
	return err
}

func (w *watched) SendMsg(m any) error {
	err := w.ServerStream.SendMsg(m)
	if err == nil {
		w.cs.sent(w.st, m)
	}
	return err
}

func (cs *Clients) received(st *stream, m any) {
	var node *envoy_config_core_v3.Node
	var typeURL, nonce, version, detail string
	var nack bool
	switch req := m.(type) {
	case *envoy_service_discovery_v3.DiscoveryRequest:
		node, typeURL, nonce, version = req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), req.GetVersionInfo()
		nack, detail = req.GetErrorDetail() != nil, req.GetErrorDetail().GetMessage()
	case *envoy_service_discovery_v3.DeltaDiscoveryRequest:
		node, typeURL, nonce = req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce()
		nack, detail = req.GetErrorDetail() != nil, req.GetErrorDetail().GetMessage()
	default:
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if st.node == nil && node != nil {
		st.node = node
	}
	if nonce == "" {
		return
	}
	sentVersion, known := st.nonces[typeURL+"\x00"+nonce]
	if !known {
		return // an old response's nonce, or a subscription change
	}
	delete(st.nonces, typeURL+"\x00"+nonce)
	tv := st.typeOf(typeURL)
	if nack {
		tv.Rejected, tv.Error = sentVersion, detail
		return
	}
	if version == "" {
		version = sentVersion
	}
	tv.Acked = version
	if tv.Rejected != "" && tv.Acked == tv.Sent {
		tv.Rejected, tv.Error = "", ""
	}
}

func (cs *Clients) sent(st *stream, m any) {
	var typeURL, nonce, version string
	switch resp := m.(type) {
	case *envoy_service_discovery_v3.DiscoveryResponse:
		typeURL, nonce, version = resp.GetTypeUrl(), resp.GetNonce(), resp.GetVersionInfo()
	case *envoy_service_discovery_v3.DeltaDiscoveryResponse:
		typeURL, nonce, version = resp.GetTypeUrl(), resp.GetNonce(), resp.GetSystemVersionInfo()
	default:
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	st.typeOf(typeURL).Sent = version
	// Unanswered nonces of a type are superseded by the next response.
	for k := range st.nonces {
		if strings.HasPrefix(k, typeURL+"\x00") {
			delete(st.nonces, k)
		}
	}
	st.nonces[typeURL+"\x00"+nonce] = version
}

func (st *stream) typeOf(typeURL string) *typeVersions {
	tv := st.types[typeURL]
	if tv == nil {
		tv = &typeVersions{Type: xdsres.ShortType(typeURL)}
		st.types[typeURL] = tv
	}
	return tv
}

// client is one stream as the clients page shows it.
type client struct {
	Node      string         `json:"node"`
	Cluster   string         `json:"cluster,omitempty"`
	Method    string         `json:"method"`
	Connected time.Time      `json:"connected"`
	Types     []typeVersions `json:"types"`
}

type clientGroup struct {
	Group   string   `json:"group"`
	Clients []client `json:"clients"`
}

// snapshot returns the streams open now of the nodes served from one
// gateway's cache, by consumer group.
func (cs *Clients) snapshot(root, gateway *xdscache.Cache) []clientGroup {
	byGroup := map[xdsres.Group][]client{}
	cs.mu.Lock()
	for _, st := range cs.streams {
		if root.Gateway(xdscache.GatewayOf(st.node)) != gateway {
			continue
		}
		c := client{Node: st.node.GetId(), Cluster: st.node.GetCluster(), Method: st.method, Connected: st.connected, Types: []typeVersions{}}
		for _, tv := range st.types {
			c.Types = append(c.Types, *tv)
		}
		slices.SortFunc(c.Types, func(a, b typeVersions) int { return strings.Compare(a.Type, b.Type) })
		g := xdscache.GroupOf(st.node)
		byGroup[g] = append(byGroup[g], c)
	}
	cs.mu.Unlock()
	out := []clientGroup{}
	for _, g := range xdsres.Groups {
		cl := byGroup[g]
		slices.SortFunc(cl, func(a, b client) int { return strings.Compare(a.Node, b.Node) })
		out = append(out, clientGroup{Group: string(g), Clients: append([]client{}, cl...)})
	}
	return out
}

// serveClients answers /api/clients?gateway=.
func (c *console) serveClients(w http.ResponseWriter, r *http.Request) {
	vs := c.viewsFor(w, r)
	if vs == nil {
		return
	}
	if c.cfg.Clients == nil {
		writeJSON(w, []clientGroup{})
		return
	}
	writeJSON(w, c.cfg.Clients.snapshot(c.cfg.Cache, vs.cache))
}
