package switchyard

import (
	"strings"
	"testing"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/anypb"
)

// req is the part of a DiscoveryRequest the protocol tests compare.
type req struct {
	Type, Version, Nonce string
	Names                []string
	NACK                 string // substring of error_detail; "" for none
}

func summarize(t *testing.T, rs []*envoy_service_discovery_v3.DiscoveryRequest) []req {
	t.Helper()
	out := make([]req, len(rs))
	for i, r := range rs {
		if r.GetNode().GetId() != "coredns" || r.GetNode().GetUserAgentName() != "switchyard-coredns" ||
			r.GetNode().GetMetadata().GetFields()["switchyard.dev/group"].GetStringValue() != "dns" {
			t.Errorf("request %d: node %v lacks the DNS group identity", i, r.GetNode())
		}
		typ := "cds"
		if r.GetTypeUrl() == typeEndpoint {
			typ = "eds"
		}
		out[i] = req{Type: typ, Version: r.GetVersionInfo(), Nonce: r.GetResponseNonce(), Names: r.GetResourceNames()}
		if d := r.GetErrorDetail(); d != nil {
			out[i].NACK = d.GetMessage()
		}
	}
	return out
}

// matchReqs compares requests, NACK by substring.
func matchReqs(t *testing.T, got []*envoy_service_discovery_v3.DiscoveryRequest, want ...req) {
	t.Helper()
	g := summarize(t, got)
	if len(g) != len(want) {
		t.Fatalf("requests %+v, want %+v", g, want)
	}
	for i := range want {
		if (want[i].NACK == "") != (g[i].NACK == "") || !strings.Contains(g[i].NACK, want[i].NACK) {
			t.Errorf("request %d error_detail %q, want one containing %q", i, g[i].NACK, want[i].NACK)
		}
		g[i].NACK, want[i].NACK = "", ""
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func staticCluster(name string) *envoy_config_cluster_v3.Cluster {
	c := edsCluster(name)
	c.ClusterDiscoveryType = &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_STATIC}
	c.EdsClusterConfig = nil
	return c
}

func addrs(s *xdsState, name string) string {
	a := s.assignments[name]
	if a == nil {
		return "<none>"
	}
	var out []string
	for _, e := range a.endpoints {
		out = append(out, e.addr.String())
	}
	return strings.Join(out, ",")
}

func TestProtocol(t *testing.T) {
	s := newXDSState(newNode("coredns"))
	matchReqs(t, s.streamStart(), req{Type: "cds"})

	// Clusters arrive: ACK, then subscribe to their endpoints.
	out, o := s.handle(cdsResponse("c1", edsCluster("a"), edsCluster("b")))
	if !o.acked || !o.changed {
		t.Fatalf("outcome %+v", o)
	}
	matchReqs(t, out, req{Type: "cds", Version: "c1", Nonce: "n-cds-c1"}, req{Type: "eds", Names: []string{"a", "b"}})
	if s.warm() {
		t.Error("warm before endpoints")
	}

	out, o = s.handle(edsResponse("e1",
		cla("a", loc("z", "ns/a", 0, 1, ep("10.0.0.1", healthy, 0))),
		cla("b", loc("z", "ns/b", 0, 1, ep("10.0.1.1", healthy, 0)))))
	if !o.acked || !s.warm() {
		t.Fatalf("outcome %+v, warm %t", o, s.warm())
	}
	matchReqs(t, out, req{Type: "eds", Version: "e1", Nonce: "n-eds-e1", Names: []string{"a", "b"}})

	// A bad assignment is NACKed with the previous version and keeps its
	// last good data; a good one in the same response is applied.
	out, o = s.handle(edsResponse("e2",
		cla("a", loc("z", "ns/a", 0, 1, ep("a.example.com", healthy, 0))),
		cla("b", loc("z", "ns/b", 0, 1, ep("10.0.1.2", healthy, 0)))))
	if o.acked || !o.changed {
		t.Fatalf("outcome %+v", o)
	}
	matchReqs(t, out, req{Type: "eds", Version: "e1", Nonce: "n-eds-e2", Names: []string{"a", "b"},
		NACK: `resource 0 "a": endpoints[0].lb_endpoints[0]: socket_address.address "a.example.com" is not an IP literal`})
	if got := addrs(s, "a") + " " + addrs(s, "b"); got != "10.0.0.1 10.0.1.2" {
		t.Errorf("after the NACK: a, b = %s", got)
	}

	// A cluster that is not EDS is rejected; the others stay.
	out, o = s.handle(cdsResponse("c2", edsCluster("a"), edsCluster("b"), staticCluster("c")))
	if o.acked {
		t.Fatalf("outcome %+v", o)
	}
	matchReqs(t, out, req{Type: "cds", Version: "c1", Nonce: "n-cds-c2", NACK: `resource 2 "c": cluster "c": type STATIC: a DNS balancer answers only EDS clusters`})
	if len(s.clusters) != 2 {
		t.Errorf("clusters after NACK: %d", len(s.clusters))
	}

	// An unreadable Cluster changes nothing: being full-state, leaving
	// it out would delete a cluster.
	bad := cdsResponse("c3", edsCluster("a"))
	bad.Resources = append(bad.Resources, &anypb.Any{TypeUrl: typeCluster, Value: []byte{0xff, 0xff}})
	out, o = s.handle(bad)
	if o.acked || o.changed || len(s.clusters) != 2 {
		t.Fatalf("outcome %+v, %d clusters", o, len(s.clusters))
	}
	matchReqs(t, out, req{Type: "cds", Version: "c1", Nonce: "n-cds-c3", NACK: "nothing in this response was applied"})

	// A cluster removed takes its assignment with it and is unsubscribed.
	out, o = s.handle(cdsResponse("c4", edsCluster("a")))
	if !o.acked || !o.changed || s.assignments["b"] != nil {
		t.Fatalf("outcome %+v, b = %s", o, addrs(s, "b"))
	}
	matchReqs(t, out, req{Type: "cds", Version: "c4", Nonce: "n-cds-c4"}, req{Type: "eds", Version: "e1", Nonce: "n-eds-e2", Names: []string{"a"}})

	// An assignment for a name not subscribed is dropped silently.
	out, o = s.handle(edsResponse("e3", cla("b", loc("z", "ns/b", 0, 1, ep("10.0.1.3", healthy, 0)))))
	if !o.acked || s.assignments["b"] != nil {
		t.Fatalf("outcome %+v, b = %s", o, addrs(s, "b"))
	}
	matchReqs(t, out, req{Type: "eds", Version: "e3", Nonce: "n-eds-e3", Names: []string{"a"}})

	// Types never subscribed are not answered.
	if out, o := s.handle(&envoy_service_discovery_v3.DiscoveryResponse{TypeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener"}); len(out) != 0 || o.known {
		t.Errorf("listener response answered: %+v", summarize(t, out))
	}

	// A new stream offers the versions held, without nonces.
	matchReqs(t, s.streamStart(), req{Type: "cds", Version: "c4"}, req{Type: "eds", Version: "e3", Names: []string{"a"}})

	// ... but not the EDS version while a cluster is still warming.
	s.handle(cdsResponse("c5", edsCluster("a"), edsCluster("d")))
	matchReqs(t, s.streamStart(), req{Type: "cds", Version: "c5"}, req{Type: "eds", Names: []string{"a", "d"}})
}

func TestProtocolRejects(t *testing.T) {
	withNamedPort := cla("a", loc("z", "ns/a", 0, 1, ep("10.0.0.1", healthy, 0)))
	sa := withNamedPort.Endpoints[0].LbEndpoints[0].GetEndpoint().GetAddress().GetSocketAddress()
	sa.PortSpecifier = &envoyNamedPort{NamedPort: "http"}
	cases := []struct {
		name string
		resp *envoy_service_discovery_v3.DiscoveryResponse
		want string
	}{
		{"cluster name not DNS", cdsResponse("c", edsCluster("Web.Shop")), `label "Web": byte 'W' is not a lowercase letter`},
		{"cluster name empty label", cdsResponse("c", edsCluster("web..shop")), "empty label"},
		{"cluster failing proto validation", cdsResponse("c", &envoy_config_cluster_v3.Cluster{}), "invalid Cluster.Name"},
		{"duplicate cluster", cdsResponse("c", edsCluster("a"), edsCluster("a")), "duplicate name"},
		{"wrong resource type", response(typeCluster, "c", "n", cla("a")), `type "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment" in a`},
		{"named port", edsResponse("e", withNamedPort), `named_port "http": want port_value`},
		{"endpoint weight 0", edsResponse("e", cla("a", loc("z", "ns/a", 0, 1, withWeight(ep("10.0.0.1", healthy, 0), 0)))), "LoadBalancingWeight"},
		{"ipv6 zone", edsResponse("e", cla("a", loc("z", "ns/a", 0, 1, ep("fe80::1%eth0", healthy, 0)))), "is not an IP literal"},
		{"duplicate assignment", edsResponse("e", cla("a"), cla("a")), "duplicate cluster_name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newXDSState(newNode("coredns"))
			s.streamStart()
			s.handle(cdsResponse("c0", edsCluster("a")))
			out, o := s.handle(c.resp)
			if o.acked {
				t.Fatalf("accepted")
			}
			if msg := out[0].GetErrorDetail().GetMessage(); !strings.Contains(msg, c.want) {
				t.Errorf("error_detail %q, want one containing %q", msg, c.want)
			}
		})
	}
}

func TestTableWarming(t *testing.T) {
	// A cluster without its assignment is not answered yet.
	s := newXDSState(newNode("coredns"))
	s.handle(cdsResponse("c1", edsCluster("a"), edsCluster("b")))
	s.handle(edsResponse("e1", cla("a", loc("z", "ns/a", 0, 1, ep("10.0.0.1", healthy, 0)))))
	tb := s.buildTable(nil, time.Unix(100, 0))
	if tb.entries["a"] == nil || tb.entries["b"] != nil {
		t.Errorf("entries %v, want only a", tb.entries)
	}
	// Unchanged entries are reused by the next table; the serial grows.
	s.handle(edsResponse("e2", cla("b", loc("z", "ns/b", 0, 1, ep("10.0.1.1", healthy, 0)))))
	tb2 := s.buildTable(tb, time.Unix(100, 0))
	if tb2.entries["a"] != tb.entries["a"] || tb2.entries["b"] == nil {
		t.Errorf("entry a rebuilt or b missing")
	}
	if tb2.serial <= tb.serial {
		t.Errorf("serial %d after %d", tb2.serial, tb.serial)
	}
}

func TestBackoff(t *testing.T) {
	base, maxDelay := 100*time.Millisecond, 3*time.Second
	for attempt := range 40 {
		full := maxDelay
		if attempt < 5 {
			full = base << attempt
		}
		for range 100 {
			d := backoffDelay(base, maxDelay, attempt)
			if d < full/2 || d > full {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d, full/2, full)
			}
		}
	}
}
