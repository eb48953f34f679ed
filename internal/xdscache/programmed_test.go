package xdscache

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/genproto/googleapis/rpc/status"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// fakeNode is a NodeView with fixed states.
type fakeNode struct {
	id     string
	group  xdsres.Group
	states map[string]ResourceState // by resource name
}

func (f fakeNode) ID() string          { return f.id }
func (f fakeNode) Group() xdsres.Group { return f.group }
func (f fakeNode) State(r Served) (ResourceState, string) {
	st := f.states[r.Name]
	if st == Rejected {
		return st, "bad " + r.Name
	}
	return st, ""
}

func TestProgrammedOf(t *testing.T) {
	listener := Served{Ref: Ref{xdsres.GroupEnvoy, resource.ListenerType, "https"}, Version: "1"}
	cluster := Served{Ref: Ref{xdsres.GroupEnvoy, resource.ClusterType, "c"}, Version: "2"}
	grpcListener := Served{Ref: Ref{xdsres.GroupGRPC, resource.ListenerType, "host:443"}, Version: "3"}
	both := []Served{listener, cluster, grpcListener}
	node := func(id string, g xdsres.Group, states map[string]ResourceState) NodeView {
		return fakeNode{id, g, states}
	}
	cases := []struct {
		name      string
		resources []Served
		nodes     []NodeView
		status    string
		reason    string
		message   string
	}{
		{"nothing served", nil, []NodeView{node("a", xdsres.GroupEnvoy, nil)}, "Unknown", xdsres.ReasonNotServed, ""},
		{"no node", both, nil, "Unknown", xdsres.ReasonNoNodes, ""},
		{"only unconcerned nodes", both, []NodeView{node("a", xdsres.GroupDNS, map[string]ResourceState{"c": Acked})}, "Unknown", xdsres.ReasonNoNodes, ""},
		{"all acked", both, []NodeView{
			node("a", xdsres.GroupEnvoy, map[string]ResourceState{"https": Acked, "c": Acked}),
			node("g", xdsres.GroupGRPC, map[string]ResourceState{"host:443": Acked}),
		}, "True", xdsres.ReasonProgrammed, ""},
		{"one waiting", both, []NodeView{
			node("a", xdsres.GroupEnvoy, map[string]ResourceState{"https": Acked, "c": Acked}),
			node("b", xdsres.GroupEnvoy, map[string]ResourceState{"https": Acked, "c": Waiting}),
		}, "Unknown", xdsres.ReasonPending, ""},
		{"a rejection wins, named by the first node", both, []NodeView{
			node("a", xdsres.GroupEnvoy, map[string]ResourceState{"https": Acked, "c": Waiting}),
			node("b", xdsres.GroupEnvoy, map[string]ResourceState{"https": Rejected}),
			node("c", xdsres.GroupEnvoy, map[string]ResourceState{"c": Rejected}),
		}, "False", xdsres.ReasonRejected, `node "b" (envoy) rejected envoy.config.listener.v3.Listener "https": bad https`},
		{"a state in another group does not count", []Served{listener}, []NodeView{
			node("a", xdsres.GroupEnvoy, map[string]ResourceState{"https": Acked}),
			node("g", xdsres.GroupGRPC, map[string]ResourceState{"https": Rejected}),
		}, "True", xdsres.ReasonProgrammed, ""},
	}
	for _, tc := range cases {
		got := ProgrammedOf(tc.resources, tc.nodes)
		if got.Status != tc.status || got.Reason != tc.reason || (tc.message != "" && got.Message != tc.message) {
			t.Errorf("%s: got %+v, want %s/%s %q", tc.name, got, tc.status, tc.reason, tc.message)
		}
	}
}

// ackStream drives a cache and the callbacks as go-control-plane's
// state-of-the-world server does for one stream and one type: every
// response gets the next nonce and passes through the response callback.
type ackStream struct {
	t      *testing.T
	c      *Cache
	f      funcsUnderTest
	id     int64
	typ    string
	sub    stream.Subscription
	ch     chan cache.Response
	cancel func()
	nonce  int
	last   *envoy_service_discovery_v3.DiscoveryResponse
}

type funcsUnderTest struct {
	request  func(int64, *envoy_service_discovery_v3.DiscoveryRequest) error
	response func(*ackStream, cache.Response)
}

func newAckStream(t *testing.T, c *Cache, cb *callbacks, id int64, typ string) *ackStream {
	f := cb.funcs()
	s := &ackStream{t: t, c: c, id: id, typ: typ, sub: stream.NewSotwSubscription(nil, true), ch: make(chan cache.Response, 1), cancel: func() {}}
	s.f = funcsUnderTest{
		request: f.StreamRequestFunc,
		response: func(s *ackStream, r cache.Response) {
			out, err := r.GetDiscoveryResponse()
			if err != nil {
				t.Fatal(err)
			}
			s.nonce++
			out.Nonce = strconv.Itoa(s.nonce)
			s.sub.SetReturnedResources(r.GetReturnedResources())
			f.StreamResponseFunc(r.GetContext(), s.id, r.GetRequest(), out)
			s.last = out
		},
	}
	return s
}

// send sends a request answering the last response (ACK, or NACK with
// detail) and delivers what the cache answers, if anything.
func (s *ackStream) send(detail string) {
	s.t.Helper()
	req := &envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: s.typ}
	if s.last != nil {
		req.ResponseNonce, req.VersionInfo = s.last.GetNonce(), s.last.GetVersionInfo()
	}
	if detail != "" {
		req.ErrorDetail = &status.Status{Code: 3, Message: detail}
	}
	if err := s.f.request(s.id, req); err != nil {
		s.t.Fatal(err)
	}
	s.cancel()
	cancel, err := s.c.CreateWatch(req, s.sub, s.ch)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cancel = cancel
	s.deliver()
}

// deliver passes on the response the cache answered the open watch with,
// if any.
func (s *ackStream) deliver() {
	select {
	case r := <-s.ch:
		s.f.response(s, r)
	default:
	}
}

func evaluate(a *Acks, c *Cache, refs ...Ref) xdsres.Programmed {
	return a.Evaluate([][]Served{c.Served(refs)})[0]
}

// TestAcksFollowTheStream runs a stream through ACKs and a NACK and checks
// what Evaluate concludes at each step.
func TestAcksFollowTheStream(t *testing.T) {
	c := New()
	acks := NewAcks()
	cb := newTestCallbacks(&bytes.Buffer{})
	cb.acks = acks
	ref := Ref{xdsres.GroupEnvoy, resource.ClusterType, "a"}
	other := Ref{xdsres.GroupEnvoy, resource.ClusterType, "b"}
	update := func(name string, timeout int) {
		t.Helper()
		if err := c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: name, Resource: clusterRes(t, name, time.Duration(timeout)*time.Second)}}); err != nil {
			t.Fatal(err)
		}
	}
	update("a", 1)
	update("b", 1)
	if got := evaluate(acks, c, ref); got.Reason != xdsres.ReasonNoNodes {
		t.Fatalf("before any stream: %+v", got)
	}
	s := newAckStream(t, c, cb, 1, resource.ClusterType)
	s.send("") // the first request: answered with both clusters
	if got := evaluate(acks, c, ref); got.Reason != xdsres.ReasonPending {
		t.Fatalf("sent, not acknowledged: %+v", got)
	}
	s.send("")
	if got := evaluate(acks, c, ref, other); got.Status != "True" {
		t.Fatalf("acknowledged: %+v", got)
	}
	<-acks.Changed()

	// A new version of a is rejected; b, unchanged in the same response,
	// stays programmed.
	update("a", 2)
	s.deliver() // the watch the ACK opened is answered by the update
	if got := evaluate(acks, c, ref); got.Reason != xdsres.ReasonPending {
		t.Fatalf("new version sent: %+v", got)
	}
	s.send("cluster a: bad timeout")
	got := evaluate(acks, c, ref)
	if got.Status != "False" || got.Reason != xdsres.ReasonRejected || !strings.Contains(got.Message, "cluster a: bad timeout") || !strings.Contains(got.Message, `"envoy-1"`) {
		t.Fatalf("rejected: %+v", got)
	}
	if got := evaluate(acks, c, other); got.Status != "True" {
		t.Fatalf("b was not rejected: %+v", got)
	}

	// A fixed version is sent and acknowledged: programmed again.
	update("a", 3)
	s.deliver()
	s.send("")
	if got := evaluate(acks, c, ref); got.Status != "True" {
		t.Fatalf("after the fix: %+v", got)
	}

	// A closed stream no longer counts.
	cb.funcs().StreamClosedFunc(1, envoyNode)
	if got := evaluate(acks, c, ref); got.Reason != xdsres.ReasonNoNodes {
		t.Fatalf("after the stream closed: %+v", got)
	}
}

// TestDeltaAcks follows an incremental stream: what it is sent is waiting
// until acknowledged, and a NACK marks the versions it carried.
func TestDeltaAcks(t *testing.T) {
	c := New()
	acks := NewAcks()
	k := streamKey{delta: true, id: 7}
	node := &envoy_config_core_v3.Node{Id: "d", UserAgentName: "envoy"}
	ref := Ref{xdsres.GroupEnvoy, resource.ClusterType, "a"}
	if err := c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", 1)}}); err != nil {
		t.Fatal(err)
	}
	v := c.Served([]Ref{ref})[0].Version
	req := &envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: node, TypeUrl: resource.ClusterType}
	acks.deltaRequest(k, xdsres.GroupEnvoy, req)
	acks.deltaSent(k, xdsres.GroupEnvoy, req, &envoy_service_discovery_v3.DeltaDiscoveryResponse{
		TypeUrl: resource.ClusterType, Nonce: "1", Resources: []*envoy_service_discovery_v3.Resource{{Name: "a", Version: v}},
	})
	if got := evaluate(acks, c, ref); got.Reason != xdsres.ReasonPending {
		t.Fatalf("sent: %+v", got)
	}
	acks.deltaRequest(k, xdsres.GroupEnvoy, &envoy_service_discovery_v3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: "1", ErrorDetail: &status.Status{Message: "no"}})
	if got := evaluate(acks, c, ref); got.Reason != xdsres.ReasonRejected {
		t.Fatalf("rejected: %+v", got)
	}
	acks.deltaSent(k, xdsres.GroupEnvoy, req, &envoy_service_discovery_v3.DeltaDiscoveryResponse{
		TypeUrl: resource.ClusterType, Nonce: "2", Resources: []*envoy_service_discovery_v3.Resource{{Name: "a", Version: v}},
	})
	acks.deltaRequest(k, xdsres.GroupEnvoy, &envoy_service_discovery_v3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: "2"})
	if got := evaluate(acks, c, ref); got.Status != "True" {
		t.Fatalf("acknowledged on a resend: %+v", got)
	}
}

// TestNACKBlamesWhatItNames: a NACK rejects a whole response, but when
// its error names some of the new resources, only those are rejected.
func TestNACKBlamesWhatItNames(t *testing.T) {
	ta := &typeAcks{acked: map[string]string{"held": "1"}}
	sent := map[string]string{"held": "1", "alpha": "2", "beta": "3"}
	ta.reject(sent, `resource "beta": no RouteSpecifier`)
	if _, ok := ta.rejected["beta"]; !ok || len(ta.rejected) != 1 {
		t.Fatalf("rejected %v, want beta only", ta.rejected)
	}
	ta = &typeAcks{acked: map[string]string{"held": "1"}}
	ta.reject(sent, "something went wrong")
	if _, ok := ta.rejected["held"]; ok || len(ta.rejected) != 2 {
		t.Fatalf("rejected %v, want every new resource and nothing the node held", ta.rejected)
	}
}

// BenchmarkEvaluate works out the conditions of 10,000 objects of 8
// resources each, with 20 Envoy nodes that acknowledged everything, each
// holding its own maps as streams do: the build loop's cost per
// evaluation at that scale.
func BenchmarkEvaluate(b *testing.B) {
	const objects, perObject, nodes = 10000, 8, 20
	types := []string{resource.ClusterType, resource.EndpointType, resource.RouteType, resource.ListenerType}
	served := make([][]Served, objects)
	for i := range served {
		for j := range perObject {
			name := strconv.Itoa(i) + "/" + strconv.Itoa(j)
			served[i] = append(served[i], Served{Ref: Ref{xdsres.GroupEnvoy, types[j%len(types)], name}, Version: "v" + name})
		}
	}
	a := NewAcks()
	for n := range nodes {
		st := &streamAcks{node: "envoy-" + strconv.Itoa(n), group: xdsres.GroupEnvoy, types: map[string]*typeAcks{}}
		for _, typ := range types {
			st.types[typ] = &typeAcks{wildcard: true, acked: map[string]string{}}
		}
		for _, rs := range served {
			for _, r := range rs {
				st.types[r.Type].acked[r.Name] = r.Version
			}
		}
		a.streams[streamKey{id: int64(n)}] = st
	}
	b.ResetTimer()
	for range b.N {
		if got := a.Evaluate(served); got[0].Status != "True" {
			b.Fatal(got[0])
		}
	}
}
