package switchyard

import (
	"context"
	"net"
	"strings"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// nsLabel is the name, below each zone, of the name server itself, as in
// CoreDNS's kubernetes plugin: "ns.dns.<zone>". A cluster of that name
// takes precedence.
const nsLabel = "ns.dns"

// zone is one zone the plugin answers, with the names its answers repeat,
// built once in New.
type zone struct {
	name string // fully qualified
	ns   string // nsLabel.<name>: the name server
	mbox string // hostmaster.<name>: the SOA's mailbox
}

func newZone(name string) *zone {
	return &zone{name: name, ns: nsLabel + "." + name, mbox: "hostmaster." + name}
}

// ServeDNS implements plugin.Handler. Names of the zones are answered from
// the current table; before the first data arrives every answer is
// SERVFAIL, so resolvers try another server instead of caching NXDOMAIN.
func (s *Switchyard) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	state := &request.Request{W: w, Req: r}
	qname := state.Name()
	z := s.zones[plugin.Zones(s.cfg.Zones).Matches(qname)]
	if z == nil {
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	t := s.table.Load()
	if t == nil {
		s.count(ctx, state.QType(), dns.RcodeServerFailure)
		return dns.RcodeServerFailure, nil
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	rcode := s.answer(t, state, z, m)
	if rcode == dns.RcodeNameError && s.cfg.Fallthrough.Through(qname) {
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	m.Rcode = rcode
	s.count(ctx, state.QType(), rcode)
	if err := w.WriteMsg(m); err != nil {
		return dns.RcodeServerFailure, err
	}
	return rcode, nil
}

func (s *Switchyard) count(ctx context.Context, qtype uint16, rcode int) {
	answersCounter.WithLabelValues(metrics.WithServer(ctx), qtypeLabel(qtype), dns.RcodeToString[rcode]).Inc()
}

// answer fills m for a name of z and returns the rcode.
func (s *Switchyard) answer(t *table, state *request.Request, z *zone, m *dns.Msg) int {
	qname := state.Name()
	if qname == z.name {
		return s.apex(t, state, z, m)
	}
	rel := strings.TrimSuffix(qname[:len(qname)-len(z.name)], ".")
	if e := t.entries[rel]; e != nil {
		if e.cluster.cname != "" {
			return s.cname(state, e, m)
		}
		return s.cluster(t, e, rel, state, z, m)
	}
	if rel == nsLabel {
		return s.nameServer(t, state, z, m)
	}
	if label, cluster, ok := strings.Cut(rel, "."); ok {
		if e := t.entries[cluster]; e != nil && e.cluster.cname == "" {
			if ep := e.endpointByLabel(label); ep != nil {
				return s.endpointName(t, ep, state, z, m)
			}
		}
	}
	if t.interior[rel] {
		return s.noData(t, z, m)
	}
	m.Ns = []dns.RR{s.soa(t, z)}
	return dns.RcodeNameError
}

func (s *Switchyard) noData(t *table, z *zone, m *dns.Msg) int {
	m.Ns = []dns.RR{s.soa(t, z)}
	return dns.RcodeSuccess
}

func (s *Switchyard) apex(t *table, state *request.Request, z *zone, m *dns.Msg) int {
	switch state.QType() {
	case dns.TypeSOA:
		m.Answer = []dns.RR{s.soa(t, z)}
	case dns.TypeNS:
		m.Answer = []dns.RR{&dns.NS{Hdr: s.hdr(z.name, dns.TypeNS), Ns: z.ns}}
		if ip := localIP(state); ip != nil {
			m.Extra = []dns.RR{s.addrRR(z.ns, ip)}
		}
	case dns.TypeTXT:
		m.Answer = []dns.RR{s.txt(state.QName(), s.apexTXT(t))}
	default:
		return s.noData(t, z, m)
	}
	return dns.RcodeSuccess
}

// nameServer answers ns.dns.<zone> with the address the query came in on.
func (s *Switchyard) nameServer(t *table, state *request.Request, z *zone, m *dns.Msg) int {
	ip := localIP(state)
	if ip == nil || !familyMatches(state.QType(), ip.To4() != nil) {
		return s.noData(t, z, m)
	}
	m.Answer = []dns.RR{s.addrRR(state.QName(), ip)}
	return dns.RcodeSuccess
}

func familyMatches(qtype uint16, v4 bool) bool {
	return (qtype == dns.TypeA && v4) || (qtype == dns.TypeAAAA && !v4)
}

func localIP(state *request.Request) net.IP {
	ip := net.ParseIP(state.LocalIP())
	if ip == nil || ip.IsUnspecified() {
		return nil
	}
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip
}

// cluster answers a cluster's own name.
func (s *Switchyard) cluster(t *table, e *entry, rel string, state *request.Request, z *zone, m *dns.Msg) int {
	switch qtype := state.QType(); qtype {
	case dns.TypeA, dns.TypeAAAA:
		f := familyV4
		if qtype == dns.TypeAAAA {
			f = familyV6
		}
		var buf [maxMaxRecords]*endpoint
		eps := e.pickers[f].pickN(buf[:0], s.cfg.MaxRecords)
		if len(eps) == 0 {
			return s.noData(t, z, m)
		}
		m.Answer = make([]dns.RR, len(eps))
		for i, ep := range eps {
			m.Answer[i] = s.addrRR(state.QName(), ep.ip)
		}
	case dns.TypeSRV:
		if len(e.srv) == 0 {
			return s.noData(t, z, m)
		}
		suffix := "." + rel + "." + z.name
		m.Answer = make([]dns.RR, len(e.srv))
		m.Extra = make([]dns.RR, len(e.srv))
		for i, st := range e.srv {
			target := st.ep.label + suffix
			m.Answer[i] = &dns.SRV{
				Hdr:      s.hdr(state.QName(), dns.TypeSRV),
				Priority: st.priority,
				Weight:   st.weight,
				Port:     st.ep.port,
				Target:   target,
			}
			m.Extra[i] = s.addrRR(target, st.ep.ip)
		}
	case dns.TypeTXT:
		m.Answer = []dns.RR{s.txt(state.QName(), e.debugTXT(t))}
	default:
		return s.noData(t, z, m)
	}
	return dns.RcodeSuccess
}

// cname answers the name of an ExternalName Service, whatever the type
// asked: a name with a CNAME has no other records (RFC 1034 3.6.2). The
// target is outside the zone, so the client's resolver follows it.
func (s *Switchyard) cname(state *request.Request, e *entry, m *dns.Msg) int {
	m.Answer = []dns.RR{&dns.CNAME{Hdr: s.hdr(state.QName(), dns.TypeCNAME), Target: e.cluster.cname}}
	return dns.RcodeSuccess
}

// endpointName answers an SRV target name, "<address label>.<cluster>".
func (s *Switchyard) endpointName(t *table, ep *endpoint, state *request.Request, z *zone, m *dns.Msg) int {
	if !familyMatches(state.QType(), ep.addr.Is4()) {
		return s.noData(t, z, m)
	}
	m.Answer = []dns.RR{s.addrRR(state.QName(), ep.ip)}
	return dns.RcodeSuccess
}

// endpointByLabel finds a usable endpoint by its address label; drained
// and unhealthy endpoints have no name.
func (e *entry) endpointByLabel(label string) *endpoint {
	addr, ok := parseAddrLabel(label)
	if !ok {
		return nil
	}
	for i := range e.assign.endpoints {
		ep := &e.assign.endpoints[i]
		if ep.addr == addr && ep.health.usable() {
			return ep
		}
	}
	return nil
}

func (s *Switchyard) hdr(name string, rrtype uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: s.ttl}
}

func (s *Switchyard) addrRR(name string, ip net.IP) dns.RR {
	if v4 := ip.To4(); v4 != nil {
		return &dns.A{Hdr: s.hdr(name, dns.TypeA), A: v4}
	}
	return &dns.AAAA{Hdr: s.hdr(name, dns.TypeAAAA), AAAA: ip}
}

// soa is the zone's SOA. Its minimum, the negative-caching TTL, is the
// plugin's TTL: a name added to the control plane is answered by
// resolvers no later than a changed address would be.
func (s *Switchyard) soa(t *table, z *zone) dns.RR {
	return &dns.SOA{
		Hdr:     s.hdr(z.name, dns.TypeSOA),
		Ns:      z.ns,
		Mbox:    z.mbox,
		Serial:  t.serial,
		Refresh: 7200,
		Retry:   1800,
		Expire:  86400,
		Minttl:  s.ttl,
	}
}

func (s *Switchyard) txt(name string, lines []string) dns.RR {
	return &dns.TXT{Hdr: s.hdr(name, dns.TypeTXT), Txt: lines}
}
