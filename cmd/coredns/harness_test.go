package main

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/miekg/dns"

	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/xdstest"
)

// The end-to-end tests run the CoreDNS of this binary (its directives and
// plugins, started in-process through caddy as coremain does) with the
// switchyard plugin connected to a Switchyard control plane on loopback,
// and query it over UDP with github.com/miekg/dns.
//
// The tests describe what the control plane serves as DNS names made of
// weighted, prioritized services (dnsName). A controlPlane turns that into
// what the plugin receives. xdsControlPlane feeds Switchyard's xDS server
// (internal/xdscache) directly with the DNS-group resources the translator
// produces; a `switchyard serve --source DIR` implementation would write
// the same names as manifests (Services, EndpointSlices with ready and
// terminating conditions, the drain annotation, ExtensionServices or
// HTTPProxies with weights and priorities) and run every test unchanged.

// controlPlane is the control plane under test.
type controlPlane interface {
	// addr is the xDS address, host:port.
	addr() string
	// apply creates or replaces DNS names.
	apply(t testing.TB, names ...dnsName)
	// remove deletes a DNS name.
	remove(t testing.TB, name string)
	// edsVersion is the version the plugin reports (TXT eds_version) once
	// it has applied everything applied so far.
	edsVersion() string
	// stop and restart take the control plane down and up again on the
	// same address, keeping its configuration.
	stop(t testing.TB)
	restart(t testing.TB)
	// reportsUnhealthy says whether a notReady endpoint is sent as
	// UNHEALTHY (and counts against its priority's health) rather than
	// left out, as Switchyard does with endpoints Kubernetes reports not
	// ready.
	reportsUnhealthy() bool
}

// controlPlanes are the implementations every end-to-end test runs with.
var controlPlanes = []struct {
	name string
	new  func(testing.TB) controlPlane
}{
	{"xds", newXDSControlPlane},
	{"serve", newServeControlPlane},
}

// eachControlPlane runs a test once per control plane implementation.
func eachControlPlane(t *testing.T, test func(t *testing.T, cp controlPlane)) {
	for _, c := range controlPlanes {
		t.Run(c.name, func(t *testing.T) { test(t, c.new(t)) })
	}
}

// dnsName is one name the control plane serves: the services behind it.
type dnsName struct {
	name     string // e.g. "web.shop"
	services []service
}

// service is one backend Service of a name.
type service struct {
	name      string // namespace/name
	weight    uint32
	priority  uint32
	drained   bool // switchyard.dev/drain on the Service: every endpoint DRAINING
	endpoints []endpoint
}

// endpoint is one endpoint of a Service with its state.
type endpoint struct {
	addr  string
	zone  string
	node  string // the EndpointSlice's nodeName (serve only), "" for none
	state endpointState
}

type endpointState int

const (
	ready       endpointState = iota
	draining                  // drain annotation on the Service or Node, or a drained zone
	notReady                  // failing readiness: UNHEALTHY
	terminating               // serving but terminating: DRAINING
)

// xdsControlPlane implements controlPlane with Switchyard's xDS server,
// building the DNS group's resources as internal/translator does: one
// locality per service and zone with sub_zone "namespace/service", the
// service weight shared among its zones by healthy endpoints, an empty
// locality for a service without endpoints, explicit health.
type xdsControlPlane struct{ cp *xdstest.ControlPlane }

func newXDSControlPlane(t testing.TB) controlPlane {
	return &xdsControlPlane{cp: xdstest.Start(t, "127.0.0.1:0", nil)}
}

func (x *xdsControlPlane) reportsUnhealthy() bool { return true }
func (x *xdsControlPlane) addr() string           { return x.cp.Addr() }
func (x *xdsControlPlane) edsVersion() string     { return x.cp.EDSVersion() }
func (x *xdsControlPlane) stop(testing.TB)        { x.cp.Stop() }
func (x *xdsControlPlane) restart(t testing.TB)   { x.cp.Restart(t) }

func (x *xdsControlPlane) remove(t testing.TB, name string) { x.cp.Remove(t, name) }

func (x *xdsControlPlane) apply(t testing.TB, names ...dnsName) {
	t.Helper()
	var clusters []*envoy_config_cluster_v3.Cluster
	var assigns []*envoy_config_endpoint_v3.ClusterLoadAssignment
	for _, n := range names {
		clusters = append(clusters, xdstest.Cluster(n.name))
		assigns = append(assigns, assignment(n))
	}
	x.cp.Set(t, clusters, assigns...)
}

func assignment(n dnsName) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	var locs []*envoy_config_endpoint_v3.LocalityLbEndpoints
	for _, s := range n.services {
		zones := map[string][]*envoy_config_endpoint_v3.LbEndpoint{}
		healthy := map[string]uint32{}
		var order []string
		var total uint32
		for _, e := range s.endpoints {
			if _, ok := zones[e.zone]; !ok {
				order = append(order, e.zone)
			}
			h := envoy_config_core_v3.HealthStatus_HEALTHY
			switch {
			case s.drained && e.state != notReady:
				h = envoy_config_core_v3.HealthStatus_DRAINING
			case e.state == draining, e.state == terminating:
				h = envoy_config_core_v3.HealthStatus_DRAINING
			case e.state == notReady:
				h = envoy_config_core_v3.HealthStatus_UNHEALTHY
			default:
				healthy[e.zone]++
				total++
			}
			zones[e.zone] = append(zones[e.zone], xdstest.Endpoint(e.addr, h, 0))
		}
		if len(order) == 0 {
			locs = append(locs, xdstest.Locality("", s.name, s.priority, 1))
			continue
		}
		for _, z := range order {
			// The service weight shared by its zones in proportion to
			// their healthy endpoints (×1000 keeps the ratio in integers).
			w := s.weight * 1000 / uint32(len(order))
			if total > 0 {
				w = s.weight * 1000 * healthy[z] / total
			}
			locs = append(locs, xdstest.Locality(z, s.name, s.priority, max(w, 1), zones[z]...))
		}
	}
	return xdstest.Assignment(n.name, locs...)
}

// endpoints is n ready endpoints 10.<net>.0.1 .. n in zone "a".
func endpoints(net, n int) []endpoint {
	out := make([]endpoint, n)
	for i := range out {
		out[i] = endpoint{addr: fmt.Sprintf("10.%d.0.%d", net, i+1), zone: "a"}
	}
	return out
}

// coreDNS is a running CoreDNS instance.
type coreDNS struct {
	udp string
}

// caddyMu serializes starts: caddy keeps global state while starting.
var caddyMu sync.Mutex

// startCoreDNS runs a Corefile; "{{XDS}}" is replaced by the control
// plane's address. Servers listen on 127.0.0.1 with a free port.
func startCoreDNS(t testing.TB, corefile string, cp controlPlane) *coreDNS {
	t.Helper()
	corefile = strings.ReplaceAll(corefile, "{{XDS}}", cp.addr())
	caddyMu.Lock()
	caddy.Quiet, dnsserver.Quiet = true, true
	inst, err := caddy.Start(corefileInput(corefile))
	caddyMu.Unlock()
	if err != nil {
		t.Fatalf("starting CoreDNS:\n%s\n%v", corefile, err)
	}
	t.Cleanup(func() {
		inst.ShutdownCallbacks()
		_ = inst.Stop()
	})
	srv := inst.Servers()
	if len(srv) == 0 || srv[0].LocalAddr() == nil {
		t.Fatalf("CoreDNS has no UDP listener")
	}
	return &coreDNS{udp: srv[0].LocalAddr().String()}
}

type corefileInput string

func (c corefileInput) Body() []byte       { return []byte(c) }
func (c corefileInput) Path() string       { return "Corefile" }
func (c corefileInput) ServerType() string { return "dns" }

// client sends queries over one UDP socket.
type client struct {
	c    *dns.Client
	conn *dns.Conn
}

func (d *coreDNS) client(t testing.TB) *client {
	t.Helper()
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	conn, err := c.Dial(d.udp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{c: c, conn: conn}
}

func (c *client) query(t testing.TB, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := c.c.ExchangeWithConn(m, c.conn)
	if err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	return r
}

// a returns the addresses of an A answer, or the rcode name when not
// NOERROR.
func (c *client) a(t testing.TB, name string) []string {
	t.Helper()
	r := c.query(t, name, dns.TypeA)
	if r.Rcode != dns.RcodeSuccess {
		return []string{dns.RcodeToString[r.Rcode]}
	}
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	return out
}

// split sends n A queries from several clients at once and counts the
// single address of each answer.
func (d *coreDNS) split(t testing.TB, name string, n int) map[string]int {
	t.Helper()
	const workers = 8
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		c := d.client(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := map[string]int{}
			for i := w; i < n; i += workers {
				m := new(dns.Msg)
				m.SetQuestion(dns.Fqdn(name), dns.TypeA)
				r, _, err := c.c.ExchangeWithConn(m, c.conn)
				switch {
				case err != nil:
					local["error: "+err.Error()]++
				case r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1:
					local[fmt.Sprintf("%s with %d answers", dns.RcodeToString[r.Rcode], len(r.Answer))]++
				default:
					local[r.Answer[0].(*dns.A).A.String()]++
				}
			}
			mu.Lock()
			for k, v := range local {
				counts[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return counts
}

// txt returns the TXT strings of a name joined by newlines.
func (c *client) txt(t testing.TB, name string) string {
	t.Helper()
	r := c.query(t, name, dns.TypeTXT)
	var out []string
	for _, rr := range r.Answer {
		if x, ok := rr.(*dns.TXT); ok {
			out = append(out, x.Txt...)
		}
	}
	return strings.Join(out, "\n")
}

// waitApplied waits until the plugin reports (apex TXT) the EDS version
// the control plane serves now: from then on every answer reflects it,
// since queries read the table the version came with. It returns how long
// that took.
func waitApplied(t testing.TB, c *client, cp controlPlane, zone string) time.Duration {
	t.Helper()
	want := " eds_version=" + cp.edsVersion()
	return xdstest.Eventually(t, 30*time.Second, "update applied", func() (bool, string) {
		txt := c.txt(t, zone)
		return strings.Contains(txt, want), txt
	})
}

// freePort is a free loopback port, for listeners that CoreDNS opens
// itself (ready, health, prometheus).
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
