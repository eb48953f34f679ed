package translator

import (
	"testing"

	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// TestLoadAssignmentLeavesOutUnusableEndpoints: endpoints no client could
// connect to (an address that is not an IP literal, a slice of host
// names, a port out of range) are left out of the load assignment, the
// usable endpoints beside them stay, and EndpointProblems names each one
// left out with its slice and why.
func TestLoadAssignmentLeavesOutUnusableEndpoints(t *testing.T) {
	fqdn := slice("ns", "a", "a-fqdn", namedPort("http", 8080), ready("app.example.com", ""))
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	objs := newSnapshot(
		service("ns", "a", servicePort("http", 80)),
		slice("ns", "a", "a-1", namedPort("http", 8080), ready("10.0.0.1", ""), ready("10.0.0.999", ""), ready("app.example.com", ""), ready("10.0.0.3", "")),
		fqdn,
		slice("ns", "a", "a-huge", namedPort("http", 70000), ready("10.0.0.4", "")),
		slice("ns", "a", "a-zero", namedPort("http", 0), ready("10.0.0.5", "")),
		slice("ns", "a", "a-other", namedPort("metrics", 9090), ready("10.0.0.6", "")),
	)
	spec := &dag.ClusterSpec{Backends: []dag.Backend{backend("ns", "a", 80, 1, 0)}}
	got := LoadAssignment("c", spec, objs, Options{})
	want := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "c", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
		loc("", "ns/a", 0, 2000, lbe("10.0.0.1", 8080, healthy), lbe("10.0.0.3", 8080, healthy)),
	}}
	if d := diff(want, got); d != "" {
		t.Errorf("load assignment (-want +got):\n%s", d)
	}
	wantProblems := []EndpointProblem{
		{Slice: "ns/a-1", Address: "10.0.0.999", Problem: "not an IP address"},
		{Slice: "ns/a-1", Address: "app.example.com", Problem: "not an IP address"},
		{Slice: "ns/a-fqdn", WholeSlice: true, Problem: "addressType FQDN: its endpoints are host names, not addresses a client can connect to"},
		{Slice: "ns/a-huge", WholeSlice: true, Problem: `port "http": 70000 is not a port (1-65535)`},
		{Slice: "ns/a-zero", WholeSlice: true, Problem: `port "http": 0 is not a port (1-65535)`},
	}
	if d := cmp.Diff(wantProblems, EndpointProblems(spec, objs)); d != "" {
		t.Errorf("EndpointProblems (-want +got):\n%s", d)
	}

	// The same Service behind two backends (two priorities) is reported once.
	twice := &dag.ClusterSpec{Backends: []dag.Backend{backend("ns", "a", 80, 1, 0), backend("ns", "a", 80, 1, 1)}}
	if n := len(EndpointProblems(twice, objs)); n != len(wantProblems) {
		t.Errorf("a Service behind two backends gives %d problems, want %d", n, len(wantProblems))
	}
	// The gate's tests ask for what a translator with a bug would emit.
	keep := LoadAssignment("c", spec, objs, Options{KeepUnusableEndpoints: true})
	if n := len(keep.GetEndpoints()[0].GetLbEndpoints()); n != 5 {
		t.Errorf("with KeepUnusableEndpoints %d endpoints, want the 4 of a-1 and the one on port 70000", n)
	}
	good := newSnapshot(service("ns", "a", servicePort("http", 80)), slice("ns", "a", "a-1", namedPort("http", 8080), ready("10.0.0.1", "")))
	if p := EndpointProblems(spec, good); len(p) != 0 {
		t.Errorf("valid endpoints give problems: %v", p)
	}
}
