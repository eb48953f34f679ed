package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/types/known/anypb"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// programmedEntry is one object of /debug/programmed.
type programmedEntry struct {
	Kind, Namespace, Name   string
	Status, Reason, Message string
}

// programmedOf reads the Programmed condition of an HTTPProxy from the
// admin endpoint, as an operator running from a directory would.
func programmedOf(t *testing.T, s *server.Server, namespace, name string) programmedEntry {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr().String() + "/debug/programmed")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct{ Objects []programmedEntry }
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, o := range doc.Objects {
		if o.Kind == "HTTPProxy" && o.Namespace == namespace && o.Name == name {
			return o
		}
	}
	return programmedEntry{}
}

// waitProgrammed waits until the proxy shop/app has the reason.
func waitProgrammed(t *testing.T, s *server.Server, reason string) programmedEntry {
	t.Helper()
	var got programmedEntry
	waitFor(t, 10*time.Second, "shop/app to be "+reason, func() bool {
		got = programmedOf(t, s, "shop", "app")
		return got.Reason == reason
	})
	return got
}

// TestProgrammedFollowsGRPCClient connects gRPC's own xDS client, then
// serves it a listener it must reject: the proxy's Programmed condition
// goes from True to False, naming the node and the client's own error.
func TestProgrammedFollowsGRPCClient(t *testing.T) {
	dir, _, ids := weightedSetup(t)
	s := controlPlane(t, dir)
	if got := waitProgrammed(t, s, xdsres.ReasonNoNodes); got.Status != "Unknown" {
		t.Fatalf("with no node connected: %+v", got)
	}
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, ids...)
	if got := waitProgrammed(t, s, xdsres.ReasonProgrammed); got.Status != "True" {
		t.Fatalf("acknowledged: %+v", got)
	}

	// An API listener without a route configuration, under the name the
	// client subscribed to: grpc-go NACKs it.
	const name = "app.example.com"
	hcm, err := anypb.New(&envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := xdsres.NewResource(&envoy_config_listener_v3.Listener{Name: name, ApiListener: &envoy_config_listener_v3.ApiListener{ApiListener: hcm}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Cache().Update(xdsres.GroupGRPC, []xdsres.Change{{TypeURL: resource.ListenerType, Name: name, Resource: bad}}); err != nil {
		t.Fatal(err)
	}
	got := waitProgrammed(t, s, xdsres.ReasonRejected)
	if got.Status != "False" || !strings.Contains(got.Message, "e2e-"+t.Name()) || !strings.Contains(got.Message, name) {
		t.Fatalf("rejected: %+v", got)
	}
	t.Logf("condition: %s", got.Message)
}

// TestProgrammedFollowsADSClient is an Envoy-group client that ACKs or
// NACKs on command: its NACK of the proxy's new cluster shows on the
// proxy with its error_detail, and its ACK of the next version clears it.
func TestProgrammedFollowsADSClient(t *testing.T) {
	dir, _, _ := weightedSetup(t)
	s := controlPlane(t, dir)
	st, rx := sotwADS(t, s)
	next := func() *envoy_service_discovery_v3.DiscoveryResponse {
		t.Helper()
		resp, ok, err := rx.next(10 * time.Second)
		if err != nil || !ok {
			t.Fatalf("no clusters: %v", err)
		}
		return resp
	}
	answer := func(resp *envoy_service_discovery_v3.DiscoveryResponse, nack string) {
		t.Helper()
		req := &envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType, ResponseNonce: resp.GetNonce(), VersionInfo: resp.GetVersionInfo()}
		if nack != "" {
			req.ErrorDetail = &status.Status{Code: 3, Message: nack}
		}
		if err := st.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType})
	answer(next(), "")
	if got := waitProgrammed(t, s, xdsres.ReasonProgrammed); got.Status != "True" {
		t.Fatalf("acknowledged: %+v", got)
	}

	// New weights are a new cluster; the client rejects it.
	writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", map[string]int{"a": 1, "b": 1}))
	resp := next()
	nacked := time.Now()
	answer(resp, "e2e: cluster rejected on command")
	got := waitProgrammed(t, s, xdsres.ReasonRejected)
	t.Logf("the NACK showed on the condition %v after it was sent", time.Since(nacked).Round(time.Millisecond))
	if got.Status != "False" || !strings.Contains(got.Message, `"envoy-e2e" (envoy)`) || !strings.Contains(got.Message, "e2e: cluster rejected on command") {
		t.Fatalf("rejected: %+v", got)
	}

	// The next version is acknowledged: programmed again.
	writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", map[string]int{"a": 1, "c": 1}))
	answer(next(), "")
	waitProgrammed(t, s, xdsres.ReasonProgrammed)
}

// TestProgrammedFollowsDeltaClient is TestProgrammedFollowsADSClient over
// an incremental stream, whose responses name their resources and
// versions themselves.
func TestProgrammedFollowsDeltaClient(t *testing.T) {
	dir, _, _ := weightedSetup(t)
	s := controlPlane(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(dialXDS(t, s.XDSAddr().String())).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rx := receive(st.Recv)
	answer := func(nack string) {
		t.Helper()
		resp, ok, err := rx.next(10 * time.Second)
		if err != nil || !ok {
			t.Fatalf("no clusters: %v", err)
		}
		req := &envoy_service_discovery_v3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: resp.GetNonce()}
		if nack != "" {
			req.ErrorDetail = &status.Status{Code: 3, Message: nack}
		}
		if err := st.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType})
	answer("")
	waitProgrammed(t, s, xdsres.ReasonProgrammed)

	writeFile(t, dir, "proxy.yaml", proxyYAML("app.example.com", map[string]int{"a": 1, "b": 1}))
	answer("e2e: delta cluster rejected")
	if got := waitProgrammed(t, s, xdsres.ReasonRejected); !strings.Contains(got.Message, "e2e: delta cluster rejected") {
		t.Fatalf("rejected: %+v", got)
	}
}
