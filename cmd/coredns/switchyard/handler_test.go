package switchyard

import (
	"context"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/coredns/coredns/plugin/test"
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/miekg/dns"
)

// handlerFixture: web.shop weighted over two services with a standby,
// dual-stack api.shop, v4-only db.shop with a drained endpoint, and
// proxy.shop.front, which makes shop.front an interior name.
func handlerFixture(t testing.TB, mutate func(*Config)) *Switchyard {
	t.Helper()
	cfg := testConfig()
	cfg.Zones = []string{"lb.example.org.", "lb.example.net."}
	if mutate != nil {
		mutate(&cfg)
	}
	return newFed(t, cfg,
		[]*envoy_config_cluster_v3.Cluster{edsCluster("web.shop"), edsCluster("api.shop"), edsCluster("db.shop"), edsCluster("proxy.shop.front")},
		cla("web.shop",
			loc("a", "shop/v1", 0, 60, ep("10.0.0.1", healthy, 0), ep("10.0.0.2", healthy, 0)),
			loc("a", "shop/v2", 0, 40, ep("10.0.1.1", healthy, 0)),
			loc("a", "shop/standby", 1, 1, ep("10.1.0.1", healthy, 0)),
		),
		cla("api.shop", loc("a", "shop/api", 0, 1, ep("10.0.2.1", healthy, 0), ep("2001:db8::1", healthy, 0))),
		cla("db.shop", loc("a", "shop/db", 0, 1, ep("10.0.3.1", healthy, 0), ep("10.0.3.2", draining, 0))),
		cla("proxy.shop.front", loc("a", "front/proxy", 0, 1, ep("10.0.4.1", healthy, 0))),
	)
}

// query runs one query through ServeDNS and returns the written reply.
func query(t *testing.T, s *Switchyard, name string, qtype uint16) *dns.Msg {
	t.Helper()
	r := new(dns.Msg)
	r.SetQuestion(name, qtype)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	rcode, err := s.ServeDNS(context.Background(), rec, r)
	if err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	if rec.Msg == nil {
		if plugin.ClientWrite(rcode) {
			t.Fatalf("%s %s: rcode %s but nothing written", name, dns.TypeToString[qtype], dns.RcodeToString[rcode])
		}
		m := new(dns.Msg)
		m.SetRcode(r, rcode)
		return m
	}
	if _, err := rec.Msg.Pack(); err != nil {
		t.Fatalf("%s %s: reply does not pack: %v", name, dns.TypeToString[qtype], err)
	}
	return rec.Msg
}

func rrStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = strings.ReplaceAll(rr.String(), "\t", " ")
	}
	return out
}

func TestAnswers(t *testing.T) {
	s := handlerFixture(t, nil)
	const z = "lb.example.org."
	cases := []struct {
		name     string
		qname    string
		qtype    uint16
		rcode    int
		answer   []string // exact, in order; nil to skip
		answerRe string   // substring every answer record has
		nAnswer  int
		ns       string // substring of the authority section
		extra    []string
	}{
		{name: "A picks one", qname: "web.shop." + z, qtype: dns.TypeA, nAnswer: 1, answerRe: "web.shop.lb.example.org. 5 IN A 10.0."},
		{name: "second zone", qname: "web.shop.lb.example.net.", qtype: dns.TypeA, nAnswer: 1, answerRe: "IN A 10.0."},
		{name: "AAAA of v4-only is NODATA", qname: "web.shop." + z, qtype: dns.TypeAAAA, ns: "SOA ns.dns.lb.example.org. hostmaster.lb.example.org."},
		{name: "AAAA dual stack", qname: "api.shop." + z, qtype: dns.TypeAAAA, answer: []string{"api.shop.lb.example.org. 5 IN AAAA 2001:db8::1"}},
		{name: "A dual stack", qname: "api.shop." + z, qtype: dns.TypeA, answer: []string{"api.shop.lb.example.org. 5 IN A 10.0.2.1"}},
		{name: "drained never answered", qname: "db.shop." + z, qtype: dns.TypeA, answer: []string{"db.shop.lb.example.org. 5 IN A 10.0.3.1"}},
		{name: "case kept", qname: "DB.Shop.LB.example.org.", qtype: dns.TypeA, answer: []string{"DB.Shop.LB.example.org. 5 IN A 10.0.3.1"}},
		{name: "SRV lists usable endpoints with glue", qname: "db.shop." + z, qtype: dns.TypeSRV,
			answer: []string{"db.shop.lb.example.org. 5 IN SRV 0 10000 8080 10-0-3-1.db.shop.lb.example.org."},
			extra:  []string{"10-0-3-1.db.shop.lb.example.org. 5 IN A 10.0.3.1"}},
		{name: "SRV dual stack glue", qname: "api.shop." + z, qtype: dns.TypeSRV,
			answer: []string{
				"api.shop.lb.example.org. 5 IN SRV 0 5000 8080 10-0-2-1.api.shop.lb.example.org.",
				"api.shop.lb.example.org. 5 IN SRV 0 5000 8080 2001-db8-0-0-0-0-0-1.api.shop.lb.example.org.",
			},
			extra: []string{
				"10-0-2-1.api.shop.lb.example.org. 5 IN A 10.0.2.1",
				"2001-db8-0-0-0-0-0-1.api.shop.lb.example.org. 5 IN AAAA 2001:db8::1",
			}},
		{name: "SRV target resolves", qname: "10-0-3-1.db.shop." + z, qtype: dns.TypeA, answer: []string{"10-0-3-1.db.shop.lb.example.org. 5 IN A 10.0.3.1"}},
		{name: "SRV target of other family", qname: "10-0-3-1.db.shop." + z, qtype: dns.TypeAAAA, ns: "SOA"},
		{name: "drained endpoint has no name", qname: "10-0-3-2.db.shop." + z, qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: "SOA"},
		{name: "unknown endpoint label", qname: "10-0-3-9.db.shop." + z, qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: "SOA"},
		{name: "non-canonical endpoint label", qname: "010-0-3-1.db.shop." + z, qtype: dns.TypeA, rcode: dns.RcodeNameError},
		{name: "unknown name", qname: "nope.shop." + z, qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: "lb.example.org. 5 IN SOA ns.dns.lb.example.org. hostmaster.lb.example.org."},
		{name: "interior name is NODATA", qname: "shop." + z, qtype: dns.TypeA, ns: "SOA"},
		{name: "deeper interior name", qname: "shop.front." + z, qtype: dns.TypeA, ns: "SOA"},
		{name: "other qtype is NODATA", qname: "web.shop." + z, qtype: dns.TypeMX, ns: "SOA"},
		{name: "apex SOA", qname: z, qtype: dns.TypeSOA, nAnswer: 1, answerRe: "lb.example.org. 5 IN SOA ns.dns.lb.example.org. hostmaster.lb.example.org. "},
		{name: "apex NS", qname: z, qtype: dns.TypeNS, answer: []string{"lb.example.org. 5 IN NS ns.dns.lb.example.org."}, extra: []string{"ns.dns.lb.example.org. 5 IN A 127.0.0.1"}},
		{name: "apex A is NODATA", qname: z, qtype: dns.TypeA, ns: "SOA"},
		{name: "name server address", qname: "ns.dns." + z, qtype: dns.TypeA, answer: []string{"ns.dns.lb.example.org. 5 IN A 127.0.0.1"}},
		{name: "name server interior", qname: "dns." + z, qtype: dns.TypeA, ns: "SOA"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := query(t, s, c.qname, c.qtype)
			if m.Rcode != c.rcode {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[m.Rcode], dns.RcodeToString[c.rcode])
			}
			if !m.Authoritative {
				t.Errorf("aa bit not set")
			}
			got := rrStrings(m.Answer)
			switch {
			case c.answer != nil:
				if strings.Join(got, "\n") != strings.Join(c.answer, "\n") {
					t.Errorf("answer:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.answer, "\n"))
				}
			case c.answerRe != "":
				if len(got) != c.nAnswer {
					t.Fatalf("answer %v, want %d records", got, c.nAnswer)
				}
				for _, rr := range got {
					if !strings.Contains(rr, c.answerRe) {
						t.Errorf("answer %q lacks %q", rr, c.answerRe)
					}
				}
			default:
				if len(got) != 0 {
					t.Errorf("answer %v, want none", got)
				}
			}
			if c.ns != "" && (len(m.Ns) != 1 || !strings.Contains(rrStrings(m.Ns)[0], c.ns)) {
				t.Errorf("authority %v, want %q", rrStrings(m.Ns), c.ns)
			}
			if c.extra != nil && strings.Join(rrStrings(m.Extra), "\n") != strings.Join(c.extra, "\n") {
				t.Errorf("additional:\n%s\nwant:\n%s", strings.Join(rrStrings(m.Extra), "\n"), strings.Join(c.extra, "\n"))
			}
		})
	}
}

func TestTXTDebug(t *testing.T) {
	s := handlerFixture(t, nil)
	m := query(t, s, "web.shop.lb.example.org.", dns.TypeTXT)
	txt := strings.Join(m.Answer[0].(*dns.TXT).Txt, "\n")
	for _, want := range []string{
		"cluster=web.shop service=web.shop cds_version=c1 eds_version=e1",
		"locality_weighted=true overprovisioning=140",
		"load_a=p0:100%",
		"load_aaaa=none",
		"priority=0 healthy=3 unknown=0 degraded=0 draining=0 unhealthy=0",
		"priority=1 healthy=1",
		"priority=0 locality=/a/shop/v1 weight=60 endpoints=2",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("TXT lacks %q:\n%s", want, txt)
		}
	}
	m = query(t, s, "lb.example.org.", dns.TypeTXT)
	txt = strings.Join(m.Answer[0].(*dns.TXT).Txt, "\n")
	for _, want := range []string{"switchyard clusters=4 endpoints=9 cds_version=c1 eds_version=e1", "ready=true", "acks=cds:1,eds:1 nacks=cds:0,eds:0"} {
		if !strings.Contains(txt, want) {
			t.Errorf("apex TXT lacks %q:\n%s", want, txt)
		}
	}
}

func TestMaxRecords(t *testing.T) {
	s := handlerFixture(t, func(c *Config) { c.MaxRecords = 5 })
	for range 50 {
		m := query(t, s, "web.shop.lb.example.org.", dns.TypeA)
		// Three usable endpoints in P0; the standby gets no traffic.
		if len(m.Answer) != 3 {
			t.Fatalf("answer %v, want 3 distinct records", rrStrings(m.Answer))
		}
		seen := map[string]bool{}
		for _, rr := range m.Answer {
			a := rr.(*dns.A).A.String()
			if seen[a] || a == "10.1.0.1" {
				t.Fatalf("answer %v repeats or holds the standby", rrStrings(m.Answer))
			}
			seen[a] = true
		}
	}
}

func TestTTL(t *testing.T) {
	s := handlerFixture(t, func(c *Config) { c.TTL = 0 })
	m := query(t, s, "web.shop.lb.example.org.", dns.TypeA)
	if ttl := m.Answer[0].Header().Ttl; ttl != 0 {
		t.Errorf("ttl %d, want 0", ttl)
	}
	m = query(t, s, "nope.lb.example.org.", dns.TypeA)
	if soa := m.Ns[0].(*dns.SOA); soa.Minttl != 0 || soa.Hdr.Ttl != 0 {
		t.Errorf("SOA ttl %d minttl %d, want 0 0", soa.Hdr.Ttl, soa.Minttl)
	}
}

// nextHandler records that a query was passed on.
type nextHandler struct{ called int }

func (n *nextHandler) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	n.called++
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeRefused)
	_ = w.WriteMsg(m)
	return dns.RcodeRefused, nil
}

func (n *nextHandler) Name() string { return "next" }

func TestFallthrough(t *testing.T) {
	s := handlerFixture(t, func(c *Config) { c.Fallthrough = fall.F{Zones: []string{"lb.example.org."}} })
	next := &nextHandler{}
	s.Next = next
	if m := query(t, s, "web.shop.lb.example.org.", dns.TypeA); m.Rcode != dns.RcodeSuccess || next.called != 0 {
		t.Errorf("known name: rcode %s, next called %d times", dns.RcodeToString[m.Rcode], next.called)
	}
	if m := query(t, s, "shop.lb.example.org.", dns.TypeA); m.Rcode != dns.RcodeSuccess || next.called != 0 {
		t.Errorf("interior name: rcode %s, next called %d times; only NXDOMAIN falls through", dns.RcodeToString[m.Rcode], next.called)
	}
	if m := query(t, s, "nope.lb.example.org.", dns.TypeA); m.Rcode != dns.RcodeRefused || next.called != 1 {
		t.Errorf("unknown name: rcode %s, next called %d times, want the next plugin's answer", dns.RcodeToString[m.Rcode], next.called)
	}
	// The second zone does not fall through.
	if m := query(t, s, "nope.lb.example.net.", dns.TypeA); m.Rcode != dns.RcodeNameError || next.called != 1 {
		t.Errorf("unknown name of a zone without fallthrough: rcode %s", dns.RcodeToString[m.Rcode])
	}
	// Names outside the zones always go on.
	if m := query(t, s, "example.com.", dns.TypeA); m.Rcode != dns.RcodeRefused || next.called != 2 {
		t.Errorf("name outside the zones: rcode %s", dns.RcodeToString[m.Rcode])
	}
}

func TestServfailBeforeData(t *testing.T) {
	s, err := New(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if s.Ready() {
		t.Error("ready without data")
	}
	if m := query(t, s, "web.shop.lb.example.org.", dns.TypeA); m.Rcode != dns.RcodeServerFailure {
		t.Errorf("rcode %s before any data, want SERVFAIL", dns.RcodeToString[m.Rcode])
	}
}

func TestPick(t *testing.T) {
	s := handlerFixture(t, nil)
	if ap, ok := s.Pick("api.shop", true); !ok || ap.String() != "[2001:db8::1]:8080" {
		t.Errorf("Pick(api.shop, v6) = %v %v", ap, ok)
	}
	if ap, ok := s.Pick("db.shop", false); !ok || ap.String() != "10.0.3.1:8080" {
		t.Errorf("Pick(db.shop, v4) = %v %v", ap, ok)
	}
	if _, ok := s.Pick("nope", false); ok {
		t.Error("Pick of an unknown name succeeded")
	}
}
