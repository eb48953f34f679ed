package xdscheck_test

import (
	"math/rand/v2"
	"os"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// inspectedClean is the verdict CleanAssignment must never contradict:
// b decodes, and Inspect finds no problem and no reference in it.
func inspectedClean(b []byte) bool {
	m := &envoy_config_endpoint_v3.ClusterLoadAssignment{}
	if proto.Unmarshal(b, m) != nil {
		return false
	}
	errs, refs := xdscheck.Inspect(m)
	return len(errs) == 0 && len(refs) == 0
}

func socket(addr string, port uint32) *envoy_config_core_v3.Address {
	return &envoy_config_core_v3.Address{Address: &envoy_config_core_v3.Address_SocketAddress{SocketAddress: &envoy_config_core_v3.SocketAddress{
		Address: addr, PortSpecifier: &envoy_config_core_v3.SocketAddress_PortValue{PortValue: port},
	}}}
}

// assignment is a load assignment as the translator makes them, which
// each case changes.
func assignment(change func(*envoy_config_endpoint_v3.ClusterLoadAssignment)) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	lb := func(addr string) *envoy_config_endpoint_v3.LbEndpoint {
		return &envoy_config_endpoint_v3.LbEndpoint{
			HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: &envoy_config_endpoint_v3.Endpoint{Address: socket(addr, 8080)}},
			HealthStatus:   envoy_config_core_v3.HealthStatus_HEALTHY,
		}
	}
	cla := &envoy_config_endpoint_v3.ClusterLoadAssignment{
		ClusterName: "team-0/app-9-r0-s0/80+2/0371db6b0adcb3d2",
		Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
			{
				Locality:            &envoy_config_core_v3.Locality{Zone: "zone-a", SubZone: "team-0/app-9-r0-s0"},
				LbEndpoints:         []*envoy_config_endpoint_v3.LbEndpoint{lb("10.0.0.163"), lb("10.0.0.165")},
				LoadBalancingWeight: wrapperspb.UInt32(2000),
			},
			{
				Locality:            &envoy_config_core_v3.Locality{Region: "r", Zone: "zone-b", SubZone: "team-0/app-9-r0-s0"},
				LbEndpoints:         []*envoy_config_endpoint_v3.LbEndpoint{lb("2001:db8::1")},
				LoadBalancingWeight: wrapperspb.UInt32(1000),
				Priority:            1,
			},
		},
	}
	if change != nil {
		change(cla)
	}
	return cla
}

func firstEndpoint(c *envoy_config_endpoint_v3.ClusterLoadAssignment) *envoy_config_endpoint_v3.LbEndpoint {
	return c.Endpoints[0].LbEndpoints[0]
}

func firstSocket(c *envoy_config_endpoint_v3.ClusterLoadAssignment) *envoy_config_core_v3.SocketAddress {
	return firstEndpoint(c).GetEndpoint().GetAddress().GetSocketAddress()
}

// assignmentCases are load assignments clean and not, each the way the
// translator could make it or a source could let through.
func assignmentCases(t *testing.T) map[string][]byte {
	type change = func(*envoy_config_endpoint_v3.ClusterLoadAssignment)
	structs := func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
		s, _ := structpb.NewStruct(map[string]any{"a": "b"})
		firstEndpoint(c).Metadata = &envoy_config_core_v3.Metadata{FilterMetadata: map[string]*structpb.Struct{"f": s}}
	}
	typed := func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
		a, _ := anypb.New(&envoy_config_core_v3.Address{})
		firstEndpoint(c).Metadata = &envoy_config_core_v3.Metadata{TypedFilterMetadata: map[string]*anypb.Any{"f": a}}
	}
	changes := map[string]change{
		"as the translator makes it": nil,
		"no endpoints":               func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { c.Endpoints = nil },
		"no lb endpoints":            func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { c.Endpoints[0].LbEndpoints = nil },
		"no cluster name":            func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { c.ClusterName = "" },
		"port 1": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstSocket(c).PortSpecifier = &envoy_config_core_v3.SocketAddress_PortValue{PortValue: 1}
		},
		"port 65535": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstSocket(c).PortSpecifier = &envoy_config_core_v3.SocketAddress_PortValue{PortValue: 65535}
		},
		"port 0": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstSocket(c).PortSpecifier = &envoy_config_core_v3.SocketAddress_PortValue{PortValue: 0}
		},
		"port 65536": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstSocket(c).PortSpecifier = &envoy_config_core_v3.SocketAddress_PortValue{PortValue: 65536}
		},
		"port 70000": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstSocket(c).PortSpecifier = &envoy_config_core_v3.SocketAddress_PortValue{PortValue: 70000}
		},
		"named port": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstSocket(c).PortSpecifier = &envoy_config_core_v3.SocketAddress_NamedPort{NamedPort: "http"}
		},
		"no port":      func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstSocket(c).PortSpecifier = nil },
		"a host name":  func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstSocket(c).Address = "app.example.com" },
		"no address":   func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstSocket(c).Address = "" },
		"an IPv6 zone": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstSocket(c).Address = "fe80::1%eth0" },
		"a resolver":   func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstSocket(c).ResolverName = "dns" },
		"UDP": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstSocket(c).Protocol = envoy_config_core_v3.SocketAddress_UDP
		},
		"an undefined protocol": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstSocket(c).Protocol = 7 },
		"ipv4_compat":           func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstSocket(c).Ipv4Compat = true },
		"a pipe": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstEndpoint(c).GetEndpoint().Address = &envoy_config_core_v3.Address{Address: &envoy_config_core_v3.Address_Pipe{Pipe: &envoy_config_core_v3.Pipe{Path: "/p"}}}
		},
		"an empty address": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstEndpoint(c).GetEndpoint().Address = &envoy_config_core_v3.Address{}
		},
		"no endpoint address": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstEndpoint(c).GetEndpoint().Address = nil },
		"a host name field":   func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstEndpoint(c).GetEndpoint().Hostname = "h" },
		"additional addresses": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstEndpoint(c).GetEndpoint().AdditionalAddresses = []*envoy_config_endpoint_v3.Endpoint_AdditionalAddress{{Address: socket("x", 0)}}
		},
		"a health check port": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstEndpoint(c).GetEndpoint().HealthCheckConfig = &envoy_config_endpoint_v3.Endpoint_HealthCheckConfig{PortValue: 70000}
		},
		"an endpoint name": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstEndpoint(c).HostIdentifier = &envoy_config_endpoint_v3.LbEndpoint_EndpointName{EndpointName: "e"}
		},
		"an undefined health": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { firstEndpoint(c).HealthStatus = 99 },
		"endpoint weight 0": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstEndpoint(c).LoadBalancingWeight = wrapperspb.UInt32(0)
		},
		"endpoint weight 1": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			firstEndpoint(c).LoadBalancingWeight = wrapperspb.UInt32(1)
		},
		"locality weight 0": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			c.Endpoints[0].LoadBalancingWeight = wrapperspb.UInt32(0)
		},
		"priority 128":   func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { c.Endpoints[0].Priority = 128 },
		"priority 129":   func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) { c.Endpoints[0].Priority = 129 },
		"metadata":       structs,
		"typed metadata": typed,
		"locality metadata": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			c.Endpoints[0].Metadata = &envoy_config_core_v3.Metadata{}
		},
		"an empty locality": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			c.Endpoints[0].Locality = &envoy_config_core_v3.Locality{}
		},
		"a policy": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			c.Policy = &envoy_config_endpoint_v3.ClusterLoadAssignment_Policy{}
		},
		"a policy with a bad overload": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			c.Policy = &envoy_config_endpoint_v3.ClusterLoadAssignment_Policy{OverprovisioningFactor: wrapperspb.UInt32(0)}
		},
		"named endpoints": func(c *envoy_config_endpoint_v3.ClusterLoadAssignment) {
			c.NamedEndpoints = map[string]*envoy_config_endpoint_v3.Endpoint{"n": {Address: socket("x", 0)}}
		},
	}
	out := map[string][]byte{}
	for name, ch := range changes {
		b, err := xdsres.Marshal(assignment(ch))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b
	}
	good := out["as the translator makes it"]
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
	}
	out["given twice"] = append(append([]byte(nil), good...), good...)
	out["a name not UTF-8"] = str(1, "a\xff")
	out["an empty name given"] = append(str(1, ""), good[len(str(1, "team-0/app-9-r0-s0/80+2/0371db6b0adcb3d2")):]...)
	out["a name given as a varint"] = protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 3)
	out["an unknown field"] = append(append([]byte(nil), good...), str(99, "x")...)
	out["nothing"] = nil
	return out
}

// TestCleanAssignmentIsInspect compares CleanAssignment with the full
// inspection of the decoded message on load assignments clean and not,
// and on every one-byte change and many random changes of their
// encodings: whenever it says clean, so must the inspection.
func TestCleanAssignmentIsInspect(t *testing.T) {
	cases := assignmentCases(t)
	for _, name := range []string{"as the translator makes it", "port 1", "port 65535", "UDP", "endpoint weight 1", "priority 128", "an undefined health", "an IPv6 zone", "an empty locality"} {
		if !xdscheck.CleanAssignment(cases[name]) {
			t.Errorf("%s: not found clean, which the translator makes", name)
		}
	}
	check := func(name string, b []byte) {
		if xdscheck.CleanAssignment(b) && !inspectedClean(b) {
			t.Errorf("%s: CleanAssignment says clean, the inspection does not (%x)", name, b)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, b := range cases {
		check(name, b)
		for i := range b {
			for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff, b[i] + 1, b[i] - 1, b[i] ^ 0x80} {
				m := append([]byte(nil), b...)
				m[i] = v
				check(name+" changed", m)
			}
			check(name+" truncated", b[:i])
		}
		for range 500 {
			m := append([]byte(nil), b...)
			for range 1 + rng.IntN(4) {
				if len(m) > 0 {
					m[rng.IntN(len(m))] = byte(rng.Uint32())
				}
			}
			check(name+" changed at random", m)
		}
	}
}

// TestCleanAssignmentOnTheGoldenInputs checks every load assignment the
// translator's golden cases make, for every group.
func TestCleanAssignmentOnTheGoldenInputs(t *testing.T) {
	dirs, err := os.ReadDir("../translator/testdata")
	if err != nil {
		t.Fatal(err)
	}
	clean := 0
	for _, d := range dirs {
		if _, err := os.Stat("../translator/testdata/" + d.Name() + "/input.yaml"); err != nil {
			continue
		}
		for group, r := range translate(t, d.Name()) {
			for _, cla := range r.Endpoints {
				b, err := xdsres.Marshal(cla)
				if err != nil {
					t.Fatal(err)
				}
				fast, full := xdscheck.CleanAssignment(b), inspectedClean(b)
				if fast && !full {
					t.Errorf("%s %s %q: CleanAssignment says clean, the inspection does not", d.Name(), group, cla.GetClusterName())
				}
				if fast {
					clean++
				}
			}
		}
	}
	if clean == 0 {
		t.Error("no golden load assignment was found clean: the fast path is never taken")
	}
}
