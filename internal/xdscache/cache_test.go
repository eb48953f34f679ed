package xdscache

import (
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

var envoyNode = &envoy_config_core_v3.Node{Id: "envoy-1", UserAgentName: "envoy"}

func clusterRes(t *testing.T, name string, timeout time.Duration) *xdsres.Resource {
	t.Helper()
	r, err := xdsres.NewResource(&envoy_config_cluster_v3.Cluster{Name: name, ConnectTimeout: durationpb.New(timeout)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func claRes(t *testing.T, name string, weight uint32) *xdsres.Resource {
	t.Helper()
	r, err := xdsres.NewResource(&envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: name, Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{{Priority: weight}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sotwStream mimics what go-control-plane's server does with a stream's
// subscription: it records what each response returned.
type sotwStream struct {
	t     *testing.T
	c     *Cache
	typ   string
	sub   stream.Subscription
	ch    chan cache.Response
	nonce string
	last  string
	n     int
}

func newSotw(t *testing.T, c *Cache, typ string, names ...string) *sotwStream {
	return &sotwStream{t: t, c: c, typ: typ, sub: stream.NewSotwSubscription(names, true), ch: make(chan cache.Response, 1)}
}

// request opens a watch as the server would for a request carrying the
// stream's current state; it returns the response if the cache answered
// at once.
func (s *sotwStream) request(version string, nack bool) *envoy_service_discovery_v3.DiscoveryResponse {
	s.t.Helper()
	req := &envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: s.typ, VersionInfo: version, ResponseNonce: s.nonce}
	if nack {
		req.ErrorDetail = &status.Status{Code: 3, Message: "rejected"}
	}
	if _, err := s.c.CreateWatch(req, s.sub, s.ch); err != nil {
		s.t.Fatal(err)
	}
	return s.poll()
}

func (s *sotwStream) poll() *envoy_service_discovery_v3.DiscoveryResponse {
	s.t.Helper()
	select {
	case r := <-s.ch:
		dr, err := r.GetDiscoveryResponse()
		if err != nil {
			s.t.Fatal(err)
		}
		s.n++
		s.nonce = string(rune('a' + s.n))
		s.last = dr.GetVersionInfo()
		s.sub.SetReturnedResources(r.GetReturnedResources())
		return dr
	default:
		return nil
	}
}

func names(dr *envoy_service_discovery_v3.DiscoveryResponse) []string {
	var out []string
	for _, a := range dr.GetResources() {
		var c envoy_config_cluster_v3.Cluster
		if a.MessageIs(&c) && a.UnmarshalTo(&c) == nil {
			out = append(out, c.GetName())
			continue
		}
		var cla envoy_config_endpoint_v3.ClusterLoadAssignment
		if a.UnmarshalTo(&cla) == nil {
			out = append(out, cla.GetClusterName())
		}
	}
	return out
}

func TestSotwWildcardClusters(t *testing.T) {
	c := New()
	s := newSotw(t, c, resource.ClusterType)
	if dr := s.request("", false); dr == nil || len(dr.Resources) != 0 {
		t.Fatalf("first wildcard request must be answered even with nothing, got %v", dr)
	}
	if dr := s.request(s.last, false); dr != nil {
		t.Fatalf("an up-to-date stream must not be answered, got %v", names(dr))
	}
	if err := c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", time.Second)}}); err != nil {
		t.Fatal(err)
	}
	dr := s.poll()
	if got := names(dr); len(got) != 1 || got[0] != "a" {
		t.Fatalf("want [a], got %v", got)
	}
	s.request(s.last, false)
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "b", Resource: clusterRes(t, "b", time.Second)}})
	if got := names(s.poll()); len(got) != 2 {
		t.Fatalf("clusters are full state: want [a b], got %v", got)
	}
	s.request(s.last, false)
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", time.Second)}})
	if dr := s.poll(); dr != nil {
		t.Fatal("an update with an unchanged version must push nothing")
	}
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a"}})
	if got := names(s.poll()); len(got) != 1 || got[0] != "b" {
		t.Fatalf("deletion is expressed by leaving a out: got %v", got)
	}
}

func TestSotwEndpointsSendOnlyWhatChanged(t *testing.T) {
	c := New()
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{
		{TypeURL: resource.EndpointType, Name: "a", Resource: claRes(t, "a", 1)},
		{TypeURL: resource.EndpointType, Name: "b", Resource: claRes(t, "b", 1)},
		{TypeURL: resource.EndpointType, Name: "c", Resource: claRes(t, "c", 1)},
	})
	s := newSotw(t, c, resource.EndpointType, "a", "b")
	if got := names(s.request("", false)); len(got) != 2 {
		t.Fatalf("want a and b, got %v", got)
	}
	s.request(s.last, false)
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.EndpointType, Name: "c", Resource: claRes(t, "c", 2)}})
	if dr := s.poll(); dr != nil {
		t.Fatal("a change to an unsubscribed resource must not be pushed")
	}
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.EndpointType, Name: "b", Resource: claRes(t, "b", 2)}})
	if got := names(s.poll()); len(got) != 1 || got[0] != "b" {
		t.Fatalf("want only b, got %v", got)
	}
	if rr := s.sub.ReturnedResources(); len(rr) != 2 {
		t.Fatalf("returned resources must still hold a and b: %v", rr)
	}
}

func TestSotwNACKIsNotResent(t *testing.T) {
	c := New()
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", time.Second)}})
	s := newSotw(t, c, resource.ClusterType)
	if dr := s.request("", false); dr == nil {
		t.Fatal("no initial response")
	}
	// The client rejects it and reports the version it had before.
	if dr := s.request("", true); dr != nil {
		t.Fatal("a NACKed response must not be re-sent until the content changes")
	}
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", 2*time.Second)}})
	if dr := s.poll(); dr == nil {
		t.Fatal("new content must be pushed after a NACK")
	}
}

func TestSotwReconnectWithCurrentVersion(t *testing.T) {
	c := New()
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", time.Second)}})
	version := c.Version(xdsres.GroupEnvoy, resource.ClusterType)
	// A restarted server builds the same content: the same version.
	c2 := New()
	_ = c2.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: clusterRes(t, "a", time.Second)}})
	if v := c2.Version(xdsres.GroupEnvoy, resource.ClusterType); v != version {
		t.Fatalf("versions must come from content: %s vs %s", v, version)
	}
	s := newSotw(t, c2, resource.ClusterType)
	if dr := s.request(version, false); dr != nil {
		t.Fatal("a client reconnecting with the current version must get nothing")
	}
	s2 := newSotw(t, c2, resource.ClusterType)
	if dr := s2.request("stale", false); dr == nil || len(dr.Resources) != 1 {
		t.Fatal("a client with another version must get the clusters")
	}
}

func TestDeltaInitialVersions(t *testing.T) {
	c := New()
	a, b := clusterRes(t, "a", time.Second), clusterRes(t, "b", time.Second)
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "a", Resource: a}, {TypeURL: resource.ClusterType, Name: "b", Resource: b}})
	ch := make(chan cache.DeltaResponse, 1)
	req := &envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType}
	sub := stream.NewDeltaSubscription(nil, nil, map[string]string{"a": a.Version, "b": b.Version, "gone": "x"}, true)
	if _, err := c.CreateDeltaWatch(req, sub, ch); err != nil {
		t.Fatal(err)
	}
	resp := (<-ch).(*cache.DeltaPassthroughResponse)
	if n := len(resp.DeltaDiscoveryResponse.Resources); n != 0 {
		t.Fatalf("resources the client already holds must not be re-sent, got %d", n)
	}
	if rm := resp.DeltaDiscoveryResponse.RemovedResources; len(rm) != 1 || rm[0] != "gone" {
		t.Fatalf("removed = %v", rm)
	}
	sub.SetReturnedResources(resp.NextVersionMap)
	req.ResponseNonce = "1"
	if _, err := c.CreateDeltaWatch(req, sub, ch); err != nil {
		t.Fatal(err)
	}
	_ = c.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ClusterType, Name: "b", Resource: clusterRes(t, "b", 3*time.Second)}})
	resp = (<-ch).(*cache.DeltaPassthroughResponse)
	if rs := resp.DeltaDiscoveryResponse.Resources; len(rs) != 1 || rs[0].Name != "b" {
		t.Fatalf("want only b, got %v", rs)
	}
	if len(resp.NextVersionMap) != 2 {
		t.Fatalf("next versions = %v", resp.NextVersionMap)
	}
}

func TestGroupsAreIsolated(t *testing.T) {
	if err := New().Update(xdsres.GroupGRPC, []xdsres.Change{{TypeURL: resource.SecretType, Name: "s"}}); err == nil {
		t.Fatal("the grpc group must refuse secrets")
	}
	c := New()
	grpcNode := &envoy_config_core_v3.Node{Id: "x", UserAgentName: "gRPC Go"}
	ch := make(chan cache.Response, 1)
	req := &envoy_service_discovery_v3.DiscoveryRequest{Node: grpcNode, TypeUrl: resource.SecretType, ResourceNames: []string{"s"}}
	if _, err := c.CreateWatch(req, stream.NewSotwSubscription([]string{"s"}, false), ch); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("a gRPC node must never be answered for secrets")
	default:
	}
}

func TestGroupOf(t *testing.T) {
	meta := func(g string) *structpb.Struct {
		s, _ := structpb.NewStruct(map[string]any{xdsres.GroupMetadataKey: g})
		return s
	}
	cases := []struct {
		node *envoy_config_core_v3.Node
		want xdsres.Group
	}{
		{&envoy_config_core_v3.Node{UserAgentName: "envoy"}, xdsres.GroupEnvoy},
		{&envoy_config_core_v3.Node{UserAgentName: "gRPC Go"}, xdsres.GroupGRPC},
		{&envoy_config_core_v3.Node{UserAgentName: "gRPC Go", Metadata: meta("dns")}, xdsres.GroupDNS},
		{&envoy_config_core_v3.Node{Id: "coredns"}, xdsres.GroupDNS},
		{&envoy_config_core_v3.Node{Id: "coredns", UserAgentName: "gRPC Go"}, xdsres.GroupGRPC},
		{&envoy_config_core_v3.Node{Metadata: meta("bogus")}, xdsres.GroupEnvoy},
		{nil, xdsres.GroupNone},
		{&envoy_config_core_v3.Node{}, xdsres.GroupNone},
	}
	for _, tc := range cases {
		if got := GroupOf(tc.node); got != tc.want {
			t.Errorf("GroupOf(%v) = %s, want %s", tc.node, got, tc.want)
		}
	}
}
