package switchyard

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/miekg/dns"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// FuzzServeDNS sends arbitrary DNS messages to the handler: it must never
// panic, and every reply it writes must pack.
func FuzzServeDNS(f *testing.F) {
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"web.shop.lb.example.org.", dns.TypeA},
		{"api.shop.lb.example.org.", dns.TypeAAAA},
		{"api.shop.lb.example.org.", dns.TypeSRV},
		{"web.shop.lb.example.org.", dns.TypeTXT},
		{"lb.example.org.", dns.TypeNS},
		{"lb.example.org.", dns.TypeSOA},
		{"10-0-3-1.db.shop.lb.example.org.", dns.TypeA},
		{"2001-db8-0-0-0-0-0-1.api.shop.lb.example.net.", dns.TypeAAAA},
		{"shop.front.lb.example.org.", dns.TypeANY},
		{"nope.lb.example.org.", dns.TypeMX},
		{"example.com.", dns.TypeA},
	} {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		m.SetEdns0(1232, true)
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	s := handlerFixture(f, nil)
	s.Next = &nextHandler{}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := new(dns.Msg)
		if err := r.Unpack(b); err != nil || len(r.Question) == 0 {
			return // CoreDNS's server drops these before any plugin
		}
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		if _, err := s.ServeDNS(context.Background(), rec, r); err != nil {
			t.Fatalf("ServeDNS: %v", err)
		}
		if rec.Msg != nil {
			if _, err := rec.Msg.Pack(); err != nil {
				t.Fatalf("reply does not pack: %v\n%v", err, rec.Msg)
			}
		}
	})
}

// FuzzHandleResponse feeds the ADS state machine arbitrary responses:
// whole DiscoveryResponses, or a single Cluster or ClusterLoadAssignment
// of arbitrary bytes. It must never panic; a response is ACKed only when
// everything in it is usable, and NACKed with error_detail and the
// previous version otherwise; the resulting table must answer.
func FuzzHandleResponse(f *testing.F) {
	seed := func(kind uint8, m proto.Message) {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(kind, b)
	}
	good := cla("a", loc("z", "ns/a", 0, 3, ep("10.0.0.1", healthy, 2), ep("2001:db8::1", degraded, 0)), loc("y", "ns/b", 1, 1, ep("10.0.1.1", draining, 0)))
	seed(0, edsResponse("e9", good))
	seed(0, cdsResponse("c9", edsCluster("a"), edsCluster("c")))
	seed(1, edsCluster("a"))
	seed(1, staticCluster("a"))
	seed(2, good)
	seed(2, cla("a", loc("z", "ns/a", 0, 1, ep("a.example.com", healthy, 0))))
	seed(2, cla("b", loc("z", "ns/b", 128, 1, ep("::ffff:10.0.0.1", unhealthy, 0))))
	f.Add(uint8(2), []byte{0x0a, 0x01, 0x61, 0x12, 0x00})

	f.Fuzz(func(t *testing.T, kind uint8, payload []byte) {
		s := newXDSState(newNode("coredns"))
		s.streamStart()
		s.handle(cdsResponse("c1", edsCluster("a"), edsCluster("b")))
		s.handle(edsResponse("e1", cla("a", loc("z", "ns/a", 0, 1, ep("10.0.0.1", healthy, 0))), cla("b", loc("z", "ns/b", 0, 1, ep("10.0.1.1", healthy, 0)))))
		prev := s.types

		var resp *envoy_service_discovery_v3.DiscoveryResponse
		switch kind % 3 {
		case 0:
			resp = &envoy_service_discovery_v3.DiscoveryResponse{}
			if proto.Unmarshal(payload, resp) != nil {
				return
			}
		case 1:
			resp = &envoy_service_discovery_v3.DiscoveryResponse{TypeUrl: typeCluster, VersionInfo: "c2", Nonce: "n",
				Resources: []*anypb.Any{{TypeUrl: typeCluster, Value: payload}}}
		case 2:
			resp = &envoy_service_discovery_v3.DiscoveryResponse{TypeUrl: typeEndpoint, VersionInfo: "e2", Nonce: "n",
				Resources: []*anypb.Any{{TypeUrl: typeEndpoint, Value: payload}}}
		}
		out, o := s.handle(resp)
		if !o.known {
			if len(out) != 0 {
				t.Fatalf("answered a response of type %q", resp.GetTypeUrl())
			}
			return
		}
		ack := out[0]
		if o.acked != (ack.GetErrorDetail() == nil) {
			t.Fatalf("acked=%t but error_detail=%v", o.acked, ack.GetErrorDetail())
		}
		if o.acked {
			if ack.GetVersionInfo() != resp.GetVersionInfo() {
				t.Fatalf("ACK version %q, response %q", ack.GetVersionInfo(), resp.GetVersionInfo())
			}
			checkAccepted(t, s, resp)
		} else if ack.GetVersionInfo() != prev[o.typ].version || ack.GetErrorDetail().GetMessage() == "" {
			t.Fatalf("NACK version %q (previous %q), detail %q", ack.GetVersionInfo(), prev[o.typ].version, ack.GetErrorDetail().GetMessage())
		}
		exercise(t, s.buildTable(nil, time.Now()))
	})
}

// checkAccepted verifies, independently of the decoder, that what was
// ACKed is usable: clusters are EDS, and the subscribed assignments hold
// every endpoint as an IP address.
func checkAccepted(t *testing.T, s *xdsState, resp *envoy_service_discovery_v3.DiscoveryResponse) {
	for _, r := range resp.GetResources() {
		switch resp.GetTypeUrl() {
		case typeCluster:
			c := &envoy_config_cluster_v3.Cluster{}
			if err := proto.Unmarshal(r.GetValue(), c); err != nil {
				t.Fatalf("ACKed an unreadable cluster: %v", err)
			}
			if c.GetType() != envoy_config_cluster_v3.Cluster_EDS || s.clusters[c.GetName()] == nil {
				t.Fatalf("ACKed cluster %q of type %s, stored %v", c.GetName(), c.GetType(), s.clusters[c.GetName()])
			}
		case typeEndpoint:
			a := &envoy_config_endpoint_v3.ClusterLoadAssignment{}
			if err := proto.Unmarshal(r.GetValue(), a); err != nil {
				t.Fatalf("ACKed an unreadable assignment: %v", err)
			}
			got := s.assignments[a.GetClusterName()]
			if got == nil {
				continue // not subscribed
			}
			n := 0
			for _, l := range a.GetEndpoints() {
				for _, e := range l.GetLbEndpoints() {
					n++
					if _, err := netip.ParseAddr(e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()); err != nil {
						t.Fatalf("ACKed endpoint address %q", e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress())
					}
				}
			}
			if n != len(got.endpoints) {
				t.Fatalf("assignment %q: %d endpoints stored of %d", a.GetClusterName(), len(got.endpoints), n)
			}
		}
	}
}

// exercise picks from every entry and builds every debug record.
func exercise(t *testing.T, tb *table) {
	var buf [maxMaxRecords]*endpoint
	for _, e := range tb.entries {
		for f := range numFamilies {
			for range 3 {
				if ep := e.pickers[f].pick(); ep != nil && !ep.health.usable() {
					t.Fatalf("picked a %s endpoint", ep.health)
				}
			}
			e.pickers[f].pickN(buf[:0], maxMaxRecords)
		}
		rr := &dns.TXT{Hdr: dns.RR_Header{Name: "x.", Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: e.debugTXT(tb)}
		m := new(dns.Msg)
		m.Answer = []dns.RR{rr}
		if _, err := m.Pack(); err != nil {
			t.Fatalf("debug TXT does not pack: %v", err)
		}
	}
}
