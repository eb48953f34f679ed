package translator

import (
	"fmt"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

const (
	healthy  = envoy_config_core_v3.HealthStatus_HEALTHY
	draining = envoy_config_core_v3.HealthStatus_DRAINING
)

func loc(zone, subZone string, priority, weight uint32, eps ...*envoy_config_endpoint_v3.LbEndpoint) *envoy_config_endpoint_v3.LocalityLbEndpoints {
	return &envoy_config_endpoint_v3.LocalityLbEndpoints{
		Locality:            &envoy_config_core_v3.Locality{Zone: zone, SubZone: subZone},
		LbEndpoints:         eps,
		LoadBalancingWeight: wrapperspb.UInt32(weight),
		Priority:            priority,
	}
}

func lbe(addr string, port uint32, h envoy_config_core_v3.HealthStatus) *envoy_config_endpoint_v3.LbEndpoint {
	return &envoy_config_endpoint_v3.LbEndpoint{
		HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: &envoy_config_endpoint_v3.Endpoint{
			Address: socketAddress(addr, port),
		}},
		HealthStatus: h,
	}
}

func TestLoadAssignment(t *testing.T) {
	tests := map[string]struct {
		backends []dag.Backend
		objects  []runtime.Object
		opts     Options
		want     []*envoy_config_endpoint_v3.LocalityLbEndpoints
	}{
		"three services 60/30/10 across two zones": {
			backends: []dag.Backend{backend("ns", "a", 80, 60, 0), backend("ns", "b", 80, 30, 0), backend("ns", "c", 80, 10, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("http", 80)),
				slice("ns", "a", "a-1", namedPort("http", 8080), ready("10.0.0.1", "z1"), ready("10.0.0.2", "z1"), ready("10.0.0.3", "z2")),
				service("ns", "b", servicePort("http", 80)),
				slice("ns", "b", "b-1", namedPort("http", 8080), ready("10.0.1.1", "z1"), ready("10.0.1.2", "z2"), ready("10.0.1.3", "z2")),
				service("ns", "c", servicePort("http", 80)),
				slice("ns", "c", "c-1", namedPort("http", 8080), ready("10.0.2.1", "z1"), ready("10.0.2.2", "z2")),
			},
			// K = 200: a 12000 (8000+4000), b 6000 (2000+4000), c 2000 (1000+1000).
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("z1", "ns/a", 0, 8000, lbe("10.0.0.1", 8080, healthy), lbe("10.0.0.2", 8080, healthy)),
				loc("z2", "ns/a", 0, 4000, lbe("10.0.0.3", 8080, healthy)),
				loc("z1", "ns/b", 0, 2000, lbe("10.0.1.1", 8080, healthy)),
				loc("z2", "ns/b", 0, 4000, lbe("10.0.1.2", 8080, healthy), lbe("10.0.1.3", 8080, healthy)),
				loc("z1", "ns/c", 0, 1000, lbe("10.0.2.1", 8080, healthy)),
				loc("z2", "ns/c", 0, 1000, lbe("10.0.2.2", 8080, healthy)),
			},
		},
		"a service with no ready endpoint contributes an empty locality of weight 1": {
			backends: []dag.Backend{backend("ns", "a", 80, 50, 0), backend("ns", "b", 80, 50, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("", 80)),
				slice("ns", "a", "a-1", namedPort("", 80), ready("10.0.0.1", "")),
				service("ns", "b", servicePort("", 80)),
				slice("ns", "b", "b-1", namedPort("", 80), notReady("10.0.1.1", ""), notReady("10.0.1.2", "")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("", "ns/a", 0, 1000, lbe("10.0.0.1", 80, healthy)),
				loc("", "ns/b", 0, 1),
			},
		},
		"terminating endpoints that still serve are DRAINING; a zone of them weighs 1": {
			backends: []dag.Backend{backend("ns", "a", 80, 1, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("", 80)),
				slice("ns", "a", "a-1", namedPort("", 80),
					ready("10.0.0.1", "z1"), terminating("10.0.0.2", "z1"), terminating("10.0.0.3", "z2"),
					endpointWith("10.0.0.4", "z1", nil, nil, nil),                     // no conditions: ready
					endpointWith("10.0.0.5", "z1", ptr(false), ptr(true), ptr(false)), // serving, not terminating: out
					endpointWith("10.0.0.6", "z1", ptr(false), nil, ptr(true)),        // terminating, not serving: out
				),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("z1", "ns/a", 0, 2000, lbe("10.0.0.1", 80, healthy), lbe("10.0.0.2", 80, draining), lbe("10.0.0.4", 80, healthy)),
				loc("z2", "ns/a", 0, 1, lbe("10.0.0.3", 80, draining)),
			},
		},
		"drained service": {
			backends: []dag.Backend{backend("ns", "a", 80, 1, 0), backend("ns", "b", 80, 1, 0)},
			objects: []runtime.Object{
				annotated(service("ns", "a", servicePort("", 80)), objects.DrainAnnotation, "true"),
				slice("ns", "a", "a-1", namedPort("", 80), ready("10.0.0.1", "z1")),
				service("ns", "b", servicePort("", 80)),
				slice("ns", "b", "b-1", namedPort("", 80), ready("10.0.1.1", "z1")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("z1", "ns/a", 0, 1, lbe("10.0.0.1", 80, draining)),
				loc("z1", "ns/b", 0, 1000, lbe("10.0.1.1", 80, healthy)),
			},
		},
		"drained node": {
			backends: []dag.Backend{backend("ns", "a", 80, 1, 0)},
			objects: []runtime.Object{
				annotated(node("n1"), objects.DrainAnnotation, "true"),
				annotated(node("n2"), objects.DrainAnnotation, "false"),
				service("ns", "a", servicePort("", 80)),
				slice("ns", "a", "a-1", namedPort("", 80),
					onNode(ready("10.0.0.1", "z1"), "n1"), onNode(ready("10.0.0.2", "z1"), "n2"), onNode(ready("10.0.0.3", "z1"), "gone")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("z1", "ns/a", 0, 2000, lbe("10.0.0.1", 80, draining), lbe("10.0.0.2", 80, healthy), lbe("10.0.0.3", 80, healthy)),
			},
		},
		"drained zone": {
			backends: []dag.Backend{backend("ns", "a", 80, 1, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("", 80)),
				slice("ns", "a", "a-1", namedPort("", 80), ready("10.0.0.1", "z1"), ready("10.0.0.2", "z2"), ready("10.0.0.3", "")),
			},
			opts: Options{DrainZones: []string{"z2"}},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("", "ns/a", 0, 1000, lbe("10.0.0.3", 80, healthy)),
				loc("z1", "ns/a", 0, 1000, lbe("10.0.0.1", 80, healthy)),
				loc("z2", "ns/a", 0, 1, lbe("10.0.0.2", 80, draining)),
			},
		},
		"priorities are weighted independently": {
			backends: []dag.Backend{backend("ns", "standby", 80, 1, 1), backend("ns", "a", 80, 3, 0), backend("ns", "b", 80, 1, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("", 80)),
				slice("ns", "a", "a-1", namedPort("", 80), ready("10.0.0.1", "z1")),
				service("ns", "b", servicePort("", 80)),
				slice("ns", "b", "b-1", namedPort("", 80), ready("10.0.1.1", "z1"), ready("10.0.1.2", "z1")),
				service("ns", "standby", servicePort("", 80)),
				slice("ns", "standby", "standby-1", namedPort("", 80), ready("10.0.9.1", "z1")),
			},
			// P0: K = max(ceil(1000/3), 2000) = 2000: a 6000, b 2000.
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("z1", "ns/a", 0, 6000, lbe("10.0.0.1", 80, healthy)),
				loc("z1", "ns/b", 0, 2000, lbe("10.0.1.1", 80, healthy), lbe("10.0.1.2", 80, healthy)),
				loc("z1", "ns/standby", 1, 1000, lbe("10.0.9.1", 80, healthy)),
			},
		},
		"ports are matched by service port name; FQDN slices and other ports are skipped": {
			backends: []dag.Backend{backend("ns", "a", 443, 1, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("http", 80), servicePort("https", 443)),
				slice("ns", "a", "a-http", namedPort("http", 8080), ready("10.0.0.1", "")),
				slice("ns", "a", "a-https", namedPort("https", 8443), ready("10.0.0.2", "")),
				withAddressType(slice("ns", "a", "a-fqdn", namedPort("https", 8443), ready("a.example.com", "")), discoveryv1.AddressTypeFQDN),
				withAddressType(slice("ns", "a", "a-v6", namedPort("https", 8443), ready("fd00:0::1", "")), discoveryv1.AddressTypeIPv6),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("", "ns/a", 0, 2000, lbe("10.0.0.2", 8443, healthy), lbe("fd00::1", 8443, healthy)),
			},
		},
		"a UDP port with the same number is not the backend's port": {
			backends: []dag.Backend{backend("ns", "dns", 53, 1, 0)},
			objects: []runtime.Object{
				service("ns", "dns", corev1.ServicePort{Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP}, servicePort("tcp", 53)),
				slice("ns", "dns", "dns-1", namedPort("tcp", 5353), ready("10.0.0.1", "")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("", "ns/dns", 0, 1000, lbe("10.0.0.1", 5353, healthy)),
			},
		},
		"duplicates across slices keep the healthier copy; addresses sort numerically": {
			backends: []dag.Backend{backend("ns", "a", 80, 1, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("", 80)),
				slice("ns", "a", "a-1", namedPort("", 80), terminating("10.0.0.10", ""), ready("10.0.0.9", "")),
				slice("ns", "a", "a-2", namedPort("", 80), ready("10.0.0.10", ""), terminating("10.0.0.9", "")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("", "ns/a", 0, 2000, lbe("10.0.0.9", 80, healthy), lbe("10.0.0.10", 80, healthy)),
			},
		},
		"one service on two ports gets a locality per port": {
			backends: []dag.Backend{backend("ns", "a", 80, 1, 0), backend("ns", "a", 81, 1, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("p80", 80), servicePort("p81", 81)),
				slice("ns", "a", "a-1", namedPort("p80", 80), ready("10.0.0.1", "")),
				slice("ns", "a", "a-2", namedPort("p81", 81), ready("10.0.0.1", "")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("", "ns/a:80", 0, 1000, lbe("10.0.0.1", 80, healthy)),
				loc("", "ns/a:81", 0, 1000, lbe("10.0.0.1", 81, healthy)),
			},
		},
		"missing service, missing port, no slices": {
			backends: []dag.Backend{backend("ns", "gone", 80, 1, 0), backend("ns", "noport", 80, 1, 0), backend("ns", "noslices", 80, 1, 0)},
			objects: []runtime.Object{
				service("ns", "noport", servicePort("", 81)),
				slice("ns", "noport", "noport-1", namedPort("", 81), ready("10.0.0.1", "")),
				service("ns", "noslices", servicePort("", 80)),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("", "ns/gone", 0, 1), loc("", "ns/noport", 0, 1), loc("", "ns/noslices", 0, 1),
			},
		},
		"a primary without endpoints keeps priority 0 present": {
			backends: []dag.Backend{backend("ns", "primary", 80, 1, 0), backend("ns", "standby", 80, 1, 1)},
			objects: []runtime.Object{
				service("ns", "primary", servicePort("", 80)),
				service("ns", "standby", servicePort("", 80)),
				slice("ns", "standby", "standby-1", namedPort("", 80), ready("10.0.0.1", "")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("", "ns/primary", 0, 1), loc("", "ns/standby", 1, 1000, lbe("10.0.0.1", 80, healthy)),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := &dag.ClusterSpec{Backends: tc.backends}
			got := LoadAssignment("c", spec, newSnapshot(tc.objects...), tc.opts)
			want := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "c", Endpoints: tc.want}
			if d := diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			validateAll(t, &Resources{Endpoints: []*envoy_config_endpoint_v3.ClusterLoadAssignment{got}})
		})
	}
}

// TestLoadAssignmentServiceRatio checks the product's promise end to end:
// whatever the endpoint counts per zone, the locality weights of each
// service sum to totals in the exact ratio of the service weights.
func TestLoadAssignmentServiceRatio(t *testing.T) {
	weights := map[string]uint32{"a": 60, "b": 30, "c": 10}
	zoneCounts := map[string][]int{"a": {5, 2}, "b": {1, 6}, "c": {3, 3}}
	var objs []runtime.Object
	var backends []dag.Backend
	for _, svc := range []string{"a", "b", "c"} {
		backends = append(backends, backend("ns", svc, 80, weights[svc], 0))
		objs = append(objs, service("ns", svc, servicePort("", 80)))
		var eps []discoveryv1.Endpoint
		for z, n := range zoneCounts[svc] {
			for i := range n {
				eps = append(eps, ready(fmt.Sprintf("10.%d.%d.%d", z, svc[0], i+1), fmt.Sprintf("zone-%d", z)))
			}
		}
		objs = append(objs, slice("ns", svc, svc+"-1", namedPort("", 80), eps...))
	}
	got := LoadAssignment("c", &dag.ClusterSpec{Backends: backends}, newSnapshot(objs...), Options{})
	totals := map[string]uint64{}
	for _, l := range got.GetEndpoints() {
		totals[l.GetLocality().GetSubZone()] += uint64(l.GetLoadBalancingWeight().GetValue())
	}
	for _, svc := range []string{"b", "c"} {
		if totals["ns/a"]*uint64(weights[svc]) != totals["ns/"+svc]*uint64(weights["a"]) {
			t.Errorf("totals %v are not in the ratio 60:30:10", totals)
		}
	}
}

func TestLoadAssignmentEmpty(t *testing.T) {
	want := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "c"}
	for name, got := range map[string]*envoy_config_endpoint_v3.ClusterLoadAssignment{
		"nil spec":     LoadAssignment("c", nil, objects.NewSnapshot(), Options{}),
		"nil snapshot": LoadAssignment("c", &dag.ClusterSpec{Backends: []dag.Backend{backend("ns", "a", 80, 1, 0)}}, nil, Options{}),
	} {
		if d := diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

// TestLoadAssignmentOrderIndependent: backends and slices in any order give
// the same assignment.
func TestLoadAssignmentOrderIndependent(t *testing.T) {
	snap := newSnapshot(
		service("ns", "a", servicePort("", 80)),
		slice("ns", "a", "a-2", namedPort("", 80), ready("10.0.0.3", "z2"), ready("10.0.0.1", "z1")),
		slice("ns", "a", "a-1", namedPort("", 80), ready("10.0.0.2", "z1")),
		service("ns", "b", servicePort("", 80)),
		slice("ns", "b", "b-1", namedPort("", 80), ready("10.0.1.1", "z1")),
	)
	forward := []dag.Backend{backend("ns", "a", 80, 2, 0), backend("ns", "b", 80, 1, 0)}
	reverse := []dag.Backend{forward[1], forward[0]}
	a := LoadAssignment("c", &dag.ClusterSpec{Backends: forward}, snap, Options{})
	b := LoadAssignment("c", &dag.ClusterSpec{Backends: reverse}, snap, Options{})
	if d := diff(a, b); d != "" {
		t.Errorf("(-forward +reverse):\n%s", d)
	}
}
