package xdscache

import (
	"bytes"
	"strings"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// TestConnectsAndDisconnectsAreLoggedOnce: a stream's many requests log
// one connect, with the node, and its end one disconnect.
func TestConnectsAndDisconnectsAreLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	f := newTestCallbacks(&logs).funcs()
	for _, typ := range []string{resource.ClusterType, resource.EndpointType, resource.ClusterType} {
		if err := f.StreamRequestFunc(7, &envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: typ}); err != nil {
			t.Fatal(err)
		}
	}
	f.StreamClosedFunc(7, envoyNode)
	f.StreamClosedFunc(7, envoyNode) // a second close of a forgotten stream says nothing
	out := logs.String()
	if n := strings.Count(out, "xDS client connected"); n != 1 {
		t.Errorf("%d connect lines, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "node="+envoyNode.GetId()) {
		t.Errorf("the connect line does not name the node %q:\n%s", envoyNode.GetId(), out)
	}
	if n := strings.Count(out, "xDS client disconnected"); n != 1 {
		t.Errorf("%d disconnect lines, want 1:\n%s", n, out)
	}
}
