package xdscache

import (
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// deltaStream mimics go-control-plane's delta server for one type: it
// records each response in the subscription, and cancels the last watch
// before opening the next one for the next request.
type deltaStream struct {
	t      *testing.T
	c      *Cache
	sub    stream.Subscription
	ch     chan cache.DeltaResponse
	cancel func()
	nonce  string
}

func newDeltaStream(t *testing.T, c *Cache, names ...string) *deltaStream {
	return &deltaStream{t: t, c: c, sub: stream.NewDeltaSubscription(names, nil, nil, false), ch: make(chan cache.DeltaResponse, 1)}
}

// request opens the watch of a request (subscribing to more names) and
// returns the response if the cache answered at once.
func (s *deltaStream) request(subscribe ...string) *envoy_service_discovery_v3.DeltaDiscoveryResponse {
	s.t.Helper()
	if s.cancel != nil {
		s.cancel()
	}
	s.sub.UpdateResourceSubscriptions(subscribe, nil)
	req := &envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.EndpointType, ResponseNonce: s.nonce, ResourceNamesSubscribe: subscribe}
	cancel, err := s.c.CreateDeltaWatch(req, s.sub, s.ch)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cancel = cancel
	return s.poll()
}

func (s *deltaStream) poll() *envoy_service_discovery_v3.DeltaDiscoveryResponse {
	s.t.Helper()
	select {
	case r := <-s.ch:
		dr, err := r.GetDeltaDiscoveryResponse()
		if err != nil {
			s.t.Fatal(err)
		}
		s.nonce += "n"
		s.sub.SetReturnedResources(r.GetNextVersionMap())
		return dr
	default:
		return nil
	}
}

func resourceNames(dr *envoy_service_discovery_v3.DeltaDiscoveryResponse) []string {
	var out []string
	for _, r := range dr.GetResources() {
		out = append(out, r.GetName())
	}
	return out
}

// TestDeltaNextWatchSeesChangesSinceResponse checks the changes a stream's
// next watch checks through its handoff (only what changed since its last
// response): a change between a response and the ACK that follows it, a
// new subscription in that request, a deletion, and a stream too far
// behind for the log.
func TestDeltaNextWatchSeesChangesSinceResponse(t *testing.T) {
	c := New()
	update := func(name string, weight uint32) {
		t.Helper()
		if err := c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.EndpointType, Name: name, Resource: claRes(t, name, weight)}}); err != nil {
			t.Fatal(err)
		}
	}
	update("a", 1)
	update("b", 1)
	update("c", 1)
	s := newDeltaStream(t, c, "a", "b")
	if got := resourceNames(s.request()); len(got) != 2 {
		t.Fatalf("initial response %v, want a and b", got)
	}
	// The ACK opens a watch that has nothing to send.
	if dr := s.request(); dr != nil {
		t.Fatalf("an up-to-date stream got %v", resourceNames(dr))
	}
	update("b", 2)
	if got := resourceNames(s.poll()); len(got) != 1 || got[0] != "b" {
		t.Fatalf("want b, got %v", got)
	}
	// a changes after that response, before the ACK's watch opens.
	update("a", 2)
	if got := resourceNames(s.request()); len(got) != 1 || got[0] != "a" {
		t.Fatalf("the next watch must send what changed since the last response: got %v", got)
	}
	// A request that subscribes to one more name gets it.
	if got := resourceNames(s.request("c")); len(got) != 1 || got[0] != "c" {
		t.Fatalf("a new subscription must be answered: got %v", got)
	}
	if dr := s.request(); dr != nil {
		t.Fatalf("an up-to-date stream got %v", resourceNames(dr))
	}
	if err := c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.EndpointType, Name: "c"}}); err != nil {
		t.Fatal(err)
	}
	if dr := s.poll(); dr == nil || len(dr.GetRemovedResources()) != 1 {
		t.Fatalf("a deletion must be sent as removed: %v", dr)
	}
	// More changes than the log holds, to another resource: the next
	// watch checks everything, and finds b changed too.
	s.request()
	update("b", 3)
	s.poll()
	update("b", 4)
	for i := range 2*maxLogged + 1 {
		update("x", uint32(i+10))
	}
	if got := resourceNames(s.request()); len(got) != 1 || got[0] != "b" {
		t.Fatalf("a stream behind the log must be checked in full: got %v", got)
	}
}

// TestDeltaHandoffOfClosedStreamIsDropped checks that what a closed
// stream's last watch left is forgotten after two updates.
func TestDeltaHandoffOfClosedStreamIsDropped(t *testing.T) {
	c := New()
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.EndpointType, Name: "a", Resource: claRes(t, "a", 1)}})
	s := newDeltaStream(t, c, "a")
	s.request()
	s.cancel() // the stream closes
	ts := c.groups[xdsres.GroupEnvoy][resource.EndpointType]
	if len(ts.handoff) != 1 {
		t.Fatalf("%d handoffs, want the closed stream's", len(ts.handoff))
	}
	for i := range 2 {
		_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.EndpointType, Name: "a", Resource: claRes(t, "a", uint32(i+2))}})
	}
	if len(ts.handoff) != 0 {
		t.Fatalf("%d handoffs left after two updates", len(ts.handoff))
	}
}
