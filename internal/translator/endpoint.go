package translator

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// LoadAssignment returns the ClusterLoadAssignment of the cluster named
// name, whose backends are spec.Backends, from the Services, EndpointSlices
// and Nodes in snap. It is the EDS fast path's unit of work: it reads
// nothing but the backends' Services, their slices and the endpoints'
// Nodes (site/architecture.md, decision 4).
//
// Each backend becomes one LocalityLbEndpoints per zone it has endpoints in,
// with locality {zone, sub_zone: "namespace/service"} and the backend's
// priority. The locality weights carry the service weights (decision 2), as
// computed by localityWeights: within a priority the services' totals keep
// the exact ratio of their weights, shared among each service's zones by
// healthy endpoint count. A backend without endpoints contributes one empty
// locality of weight 1, which carries no traffic (Envoy and gRPC give its
// share to the others instead of failing) but keeps its priority level in
// place for failover.
//
// Every endpoint's health_status is set explicitly (HEALTHY or DRAINING):
// consumers without active health checks — gRPC, the DNS balancer — would
// otherwise read UNKNOWN and use a terminating endpoint.
func LoadAssignment(name string, spec *dag.ClusterSpec, snap *objects.Snapshot, opts Options) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	return AssignmentOf(spec, snap, opts).Message(name)
}

// Assignment is the content of a load assignment, without its name: what
// LoadAssignment computes before it builds messages. The engine encodes it
// straight to wire bytes (Encode) and never builds the messages, which
// were most of what a full build allocated; Message builds them for the
// callers that want a message. An Assignment is not modified once made,
// so the groups may share it; one made in AssignmentBuffers lives only
// until their next use.
type Assignment struct {
	localities []locality
}

// locality is one LocalityLbEndpoints: one backend's endpoints in one
// zone.
type locality struct {
	zone string
	// service and port make the sub_zone, "namespace/service", or
	// "namespace/service:port" with withPort (see subZoneWithPort).
	service   types.NamespacedName
	port      int32
	withPort  bool
	weight    uint32
	priority  uint32
	endpoints []endpoint
}

// subZone is the locality's sub_zone.
func (l *locality) subZone() string {
	if l.withPort {
		return l.service.String() + ":" + strconv.Itoa(int(l.port))
	}
	return l.service.String()
}

// AssignmentOf computes the load assignment of a cluster whose backends
// are spec.Backends, as LoadAssignment documents.
func AssignmentOf(spec *dag.ClusterSpec, snap *objects.Snapshot, opts Options) *Assignment {
	return new(AssignmentBuffers).Of(spec, snap, opts)
}

// AssignmentBuffers hold the working arrays of AssignmentOf, for a caller
// that computes many assignments one after the other (the engine keeps one
// per worker): each assignment then reuses the arrays of the one before
// instead of allocating its own, which a build would only collect again.
// The zero value is ready to use; it must not be used by two goroutines
// at once.
type AssignmentBuffers struct {
	a        Assignment
	backends []dag.Backend
	groups   []backendEndpoints
	eps      []zonedEndpoint
	all      []endpoint
	zones    []zoneEndpoints
	// weights, healthy and counts are one priority's, for localityWeights.
	weights []uint32
	healthy [][]int
	counts  []int
}

// Of is AssignmentOf in the buffers: the assignment it returns is valid
// until the next call, which reuses its arrays.
func (s *AssignmentBuffers) Of(spec *dag.ClusterSpec, snap *objects.Snapshot, opts Options) *Assignment {
	s.a.localities = s.a.localities[:0]
	if spec == nil || snap == nil {
		return &s.a
	}
	s.all, s.zones = s.all[:0], s.zones[:0]
	s.backends = append(s.backends[:0], spec.Backends...)
	backends := s.backends
	slices.SortStableFunc(backends, compareBackends)
	var drainZones map[string]bool
	for _, z := range opts.DrainZones {
		if drainZones == nil {
			drainZones = make(map[string]bool, len(opts.DrainZones))
		}
		drainZones[z] = true
	}

	groups := s.groups[:0]
	for _, b := range backends {
		zones := s.collectZones(b, snap, drainZones, opts.KeepUnusableEndpoints)
		if len(zones) == 0 {
			// An empty locality keeps the backend's priority level present:
			// gRPC rejects a load assignment whose priorities skip a level,
			// which is exactly what a primary with no endpoints would do.
			zones = s.cutZones([]zoneEndpoints{{}})
		}
		groups = append(groups, backendEndpoints{backend: b, zones: zones})
	}
	s.groups = groups
	for start := 0; start < len(groups); {
		end := start + 1
		for end < len(groups) && groups[end].backend.Priority == groups[start].backend.Priority {
			end++
		}
		s.a.localities = s.appendPriorityLocalities(s.a.localities, groups[start:end])
		start = end
	}
	return &s.a
}

// cutZones copies zones to the end of s.zones and returns the copy.
// Earlier copies keep their array when s.zones grows: they are never
// written again.
func (s *AssignmentBuffers) cutZones(zones []zoneEndpoints) []zoneEndpoints {
	if cap(s.zones)-len(s.zones) < len(zones) {
		s.zones = make([]zoneEndpoints, 0, max(2*cap(s.zones), len(zones)))
	}
	start := len(s.zones)
	s.zones = append(s.zones, zones...)
	return s.zones[start:len(s.zones):len(s.zones)]
}

// compareBackends orders backends by priority, namespace, name and port:
// the order the DAG promises, enforced again because it decides the wire
// order.
func compareBackends(a, b dag.Backend) int {
	return cmp.Or(
		cmp.Compare(a.Priority, b.Priority),
		cmp.Compare(a.Service.Namespace, b.Service.Namespace),
		cmp.Compare(a.Service.Name, b.Service.Name),
		cmp.Compare(a.Port, b.Port),
	)
}

// backendEndpoints are one backend's endpoints, by zone.
type backendEndpoints struct {
	backend dag.Backend
	zones   []zoneEndpoints
}

// zoneEndpoints are the endpoints of one backend in one zone, sorted by
// address and port, unique by address and port.
type zoneEndpoints struct {
	zone      string
	endpoints []endpoint
	healthy   int
}

type endpoint struct {
	addr   hostPort
	health envoy_config_core_v3.HealthStatus
	// healthPort, when not 0, is where active health checks go.
	healthPort int32
}

// hostPort is an endpoint's address: host is the IP as netip writes it (or
// the text as given when it is not an IP), ip the parsed IP.
type hostPort struct {
	host string
	port int32
	ip   netip.Addr
	isIP bool
}

// zonedEndpoint is an endpoint with its zone, as collected from slices.
type zonedEndpoint struct {
	zone string
	endpoint
}

// appendPriorityLocalities appends the localities of the backends of one
// priority.
func (s *AssignmentBuffers) appendPriorityLocalities(out []locality, groups []backendEndpoints) []locality {
	n := 0
	for _, g := range groups {
		n += len(g.zones)
	}
	weights, healthy := s.weights[:0], s.healthy[:0]
	counts := slices.Grow(s.counts[:0], n) // every group's healthy counts, in one array
	for _, g := range groups {
		weights = append(weights, g.backend.Weight)
		start := len(counts)
		for _, z := range g.zones {
			counts = append(counts, z.healthy)
		}
		healthy = append(healthy, counts[start:len(counts):len(counts)])
	}
	s.weights, s.healthy, s.counts = weights, healthy, counts
	zoneWeights := localityWeights(weights, healthy)
	for i, g := range groups {
		withPort := subZoneWithPort(groups, i)
		for j, z := range g.zones {
			out = append(out, locality{
				zone:      z.zone,
				service:   g.backend.Service,
				port:      g.backend.Port,
				withPort:  withPort,
				weight:    zoneWeights[i][j],
				priority:  g.backend.Priority,
				endpoints: z.endpoints,
			})
		}
	}
	return out
}

// subZoneWithPort reports whether the localities of groups[i] are named
// "namespace/service:port" rather than "namespace/service": a Service listed
// twice in one priority (two of its ports) is named with the port: two
// localities with the same identity in one priority would be merged by
// Envoy, which keys locality weights by locality and so keeps only one of
// the two weights, and rejected by gRPC.
func subZoneWithPort(groups []backendEndpoints, i int) bool {
	// A priority has a few backends: counting them pairwise is cheaper
	// than a map.
	for j, o := range groups {
		if j != i && o.backend.Service == groups[i].backend.Service {
			return true
		}
	}
	return false
}

// Message builds the ClusterLoadAssignment named name, for the callers
// that need a message: the translator's own output (render, the golden
// files, the reference build) and the tests that check Encode against it.
func (a *Assignment) Message(name string) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	cla := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: name}
	if len(a.localities) == 0 {
		return cla
	}
	endpoints := 0
	for i := range a.localities {
		endpoints += len(a.localities[i].endpoints)
	}
	// One allocation for all the localities' messages.
	type localityBlock struct {
		lle      envoy_config_endpoint_v3.LocalityLbEndpoints
		locality envoy_config_core_v3.Locality
		weight   wrapperspb.UInt32Value
	}
	blocks := make([]localityBlock, len(a.localities))
	cla.Endpoints = make([]*envoy_config_endpoint_v3.LocalityLbEndpoints, len(a.localities))
	// And one for all their endpoints' messages, cut per locality.
	epBlocks := make([]lbEndpointBlock, endpoints)
	eps := make([]*envoy_config_endpoint_v3.LbEndpoint, endpoints)
	for i := range a.localities {
		l, b := &a.localities[i], &blocks[i]
		b.locality.Zone, b.locality.SubZone = l.zone, l.subZone()
		b.weight.Value = l.weight
		b.lle.Locality = &b.locality
		k := len(l.endpoints)
		b.lle.LbEndpoints = lbEndpoints(epBlocks[:k:k], eps[:k:k], l.endpoints)
		epBlocks, eps = epBlocks[k:], eps[k:]
		b.lle.LoadBalancingWeight = &b.weight
		b.lle.Priority = l.priority
		cla.Endpoints[i] = &b.lle
	}
	return cla
}

// lbEndpointBlock holds the seven messages of one LbEndpoint, so that a
// locality's endpoints take one allocation instead of seven each.
type lbEndpointBlock struct {
	lb     envoy_config_endpoint_v3.LbEndpoint
	host   envoy_config_endpoint_v3.LbEndpoint_Endpoint
	ep     envoy_config_endpoint_v3.Endpoint
	addr   envoy_config_core_v3.Address
	socket envoy_config_core_v3.Address_SocketAddress
	sa     envoy_config_core_v3.SocketAddress
	port   envoy_config_core_v3.SocketAddress_PortValue
}

// lbEndpoints builds what socketAddress builds for each endpoint, inside
// its LbEndpoint, in blocks and out (of eps' length), which the caller
// cuts from arrays shared by a whole assignment.
func lbEndpoints(blocks []lbEndpointBlock, out []*envoy_config_endpoint_v3.LbEndpoint, eps []endpoint) []*envoy_config_endpoint_v3.LbEndpoint {
	for i, ep := range eps {
		b := &blocks[i]
		b.port.PortValue = uint32(ep.addr.port)
		b.sa.Protocol = envoy_config_core_v3.SocketAddress_TCP
		b.sa.Address = ep.addr.host
		b.sa.PortSpecifier = &b.port
		b.socket.SocketAddress = &b.sa
		b.addr.Address = &b.socket
		b.ep.Address = &b.addr
		b.host.Endpoint = &b.ep
		b.lb.HostIdentifier = &b.host
		b.lb.HealthStatus = ep.health
		if ep.healthPort != 0 {
			b.ep.HealthCheckConfig = &envoy_config_endpoint_v3.Endpoint_HealthCheckConfig{PortValue: uint32(ep.healthPort)}
		}
		out[i] = &b.lb
	}
	return out
}

// collectZones gathers a backend's endpoints by zone, or nil when it has
// none: its Service is missing, has no such port, or has no usable
// endpoint.
func (s *AssignmentBuffers) collectZones(b dag.Backend, snap *objects.Snapshot, drainZones map[string]bool, keepUnusable bool) []zoneEndpoints {
	svc := snap.Services[b.Service]
	if svc == nil {
		return nil
	}
	svcDrained := objects.Drained(svc.Annotations)
	sliced := snap.SlicesFor(b.Service)
	n := 0
	for _, es := range sliced {
		n += len(es.Endpoints)
	}
	eps := slices.Grow(s.eps[:0], n)
	backendSlices(b, svc, sliced, nil, keepUnusable, func(es *objects.EndpointSlice, port, healthPort int32) {
		for i := range es.Endpoints {
			ep := &es.Endpoints[i]
			health, ok := endpointHealth(ep.Conditions())
			if !ok || !ep.HasAddress() {
				continue
			}
			// Parsed once: an address is usable (usableAddress) exactly
			// when it is an IP.
			addr := newHostPort(ep.Address, port)
			if !addr.isIP && !keepUnusable {
				continue
			}
			zone := deref(ep.Zone)
			if health == envoy_config_core_v3.HealthStatus_HEALTHY &&
				(svcDrained || drainZones[zone] || nodeDrained(snap, ep.NodeName)) {
				health = envoy_config_core_v3.HealthStatus_DRAINING
			}
			eps = append(eps, zonedEndpoint{zone, endpoint{addr: addr, health: health, healthPort: healthPort}})
		}
	})
	s.eps = eps
	return s.byZone(eps)
}

// EndpointProblem is an endpoint, or a whole EndpointSlice, that
// LoadAssignment leaves out because no client could use it. Served, one
// such endpoint would make Envoy and gRPC reject the whole load
// assignment, so the gate would hold every endpoint of the cluster at its
// last good version; left out, it is reported instead (EndpointInvalid).
type EndpointProblem struct {
	// Slice is the EndpointSlice, "namespace/name".
	Slice string
	// WholeSlice is set when the problem is the slice's and all its
	// endpoints are left out; otherwise Address is the endpoint's.
	WholeSlice bool
	Address    string
	Problem    string
}

// EndpointProblems returns what LoadAssignment leaves out of the backends'
// endpoints as unusable, by the same rules, in backend and slice order and
// without repeats.
func EndpointProblems(spec *dag.ClusterSpec, snap *objects.Snapshot) []EndpointProblem {
	if spec == nil || snap == nil {
		return nil
	}
	var out []EndpointProblem
	for _, b := range spec.Backends {
		out = AppendProblems(out, BackendProblems(b, snap))
	}
	return out
}

// BackendProblems is EndpointProblems of one backend. It depends on the
// backend's Service, Port and HealthPort alone, so that a caller checking
// many clusters can check each such backend once.
func BackendProblems(b dag.Backend, snap *objects.Snapshot) []EndpointProblem {
	svc := snap.Services[b.Service]
	if svc == nil {
		return nil
	}
	var out []EndpointProblem
	report := func(p EndpointProblem) { out = AppendProblems(out, []EndpointProblem{p}) }
	backendSlices(b, svc, snap.SlicesFor(b.Service), report, false, func(es *objects.EndpointSlice, _, _ int32) {
		for i := range es.Endpoints {
			if ep := &es.Endpoints[i]; ep.HasAddress() {
				if _, ok := endpointHealth(ep.Conditions()); ok {
					usableAddress(es, ep.Address, report)
				}
			}
		}
	})
	return out
}

// AppendProblems appends to list the problems it does not hold yet.
func AppendProblems(list, more []EndpointProblem) []EndpointProblem {
	for _, p := range more {
		if !slices.Contains(list, p) {
			list = append(list, p)
		}
	}
	return list
}

// backendSlices calls use with each of sliced, the EndpointSlices of a
// backend's Service svc, that serves the backend's port, with the slice's
// target port and health port (0 when health checks use the traffic
// port). A slice whose endpoints no client could reach (host names, a port
// out of range) is skipped and reported when report is not nil; with
// keepUnusable, a port above 65535 is passed on
// (Options.KeepUnusableEndpoints).
func backendSlices(b dag.Backend, svc *objects.Service, sliced []*objects.EndpointSlice, report func(EndpointProblem), keepUnusable bool, use func(es *objects.EndpointSlice, port, healthPort int32)) {
	portName, ok := servicePortName(svc, b.Port)
	if !ok {
		return
	}
	healthName, checkOther := "", false
	if b.HealthPort != 0 && b.HealthPort != b.Port {
		healthName, checkOther = servicePortName(svc, b.HealthPort)
	}
	for _, es := range sliced {
		if es.AddressType != discoveryv1.AddressTypeIPv4 && es.AddressType != discoveryv1.AddressTypeIPv6 {
			// FQDN slices name hosts, which EDS clients never resolve.
			reportSlice(report, es, func() string {
				return fmt.Sprintf("addressType %s: its endpoints are host names, not addresses a client can connect to", es.AddressType)
			})
			continue
		}
		port, found := slicePort(es, portName)
		if !found {
			continue
		}
		if port < 1 || port > 65535 && !keepUnusable {
			reportSlice(report, es, func() string { return fmt.Sprintf("port %s: %d is not a port (1-65535)", portLabel(portName), port) })
			continue
		}
		var healthPort int32
		if checkOther {
			if hp, found := slicePort(es, healthName); found && (hp < 1 || hp > 65535 && !keepUnusable) {
				reportSlice(report, es, func() string {
					return fmt.Sprintf("port %s (the health check port): %d is not a port (1-65535); health checks use the traffic port", portLabel(healthName), hp)
				})
			} else if found {
				healthPort = hp
			}
		}
		use(es, port, healthPort)
	}
}

// reportSlice reports a problem of a whole slice when report is not nil;
// problem is only called then, so that LoadAssignment formats nothing.
func reportSlice(report func(EndpointProblem), es *objects.EndpointSlice, problem func() string) {
	if report != nil {
		report(EndpointProblem{Slice: es.Namespace + "/" + es.Name, WholeSlice: true, Problem: problem()})
	}
}

// usableAddress reports whether a client can connect to an endpoint's
// address: EDS addresses are IP literals, never resolved. Anything else is
// reported when report is not nil.
func usableAddress(es *objects.EndpointSlice, addr string, report func(EndpointProblem)) bool {
	if _, err := netip.ParseAddr(addr); err == nil {
		return true
	}
	if report != nil {
		report(EndpointProblem{Slice: es.Namespace + "/" + es.Name, Address: addr, Problem: "not an IP address"})
	}
	return false
}

func portLabel(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return strconv.Quote(name)
}

// byZone groups endpoints by zone, zones sorted by name and each zone's
// endpoints by address and port. An address and port listed twice in a
// zone (an endpoint moving between slices shows up in both for a moment)
// is kept once, HEALTHY if either is.
func (s *AssignmentBuffers) byZone(eps []zonedEndpoint) []zoneEndpoints {
	if len(eps) == 0 {
		return nil
	}
	slices.SortFunc(eps, func(a, b zonedEndpoint) int {
		return cmp.Or(cmp.Compare(a.zone, b.zone), compareHostPort(a.addr, b.addr))
	})
	// The zones' endpoints share one array, cut in runs: the end of
	// s.all, which must not grow while they are cut from it (a new array
	// leaves the earlier assignments' runs in the old one).
	if cap(s.all)-len(s.all) < len(eps) {
		s.all = make([]endpoint, 0, max(2*cap(s.all), len(eps)))
	}
	all := s.all[len(s.all):len(s.all)]
	zones := 1
	for i := 1; i < len(eps); i++ {
		if eps[i].zone != eps[i-1].zone {
			zones++
		}
	}
	if cap(s.zones)-len(s.zones) < zones {
		s.zones = make([]zoneEndpoints, 0, max(2*cap(s.zones), zones))
	}
	out := s.zones[len(s.zones):len(s.zones)]
	for i, ep := range eps {
		if i > 0 && ep.zone == eps[i-1].zone && compareHostPort(ep.addr, eps[i-1].addr) == 0 {
			z := &out[len(out)-1]
			last := &z.endpoints[len(z.endpoints)-1]
			if last.health != envoy_config_core_v3.HealthStatus_HEALTHY && ep.health == envoy_config_core_v3.HealthStatus_HEALTHY {
				last.health = ep.health
				z.healthy++
			}
			continue
		}
		if len(out) == 0 || out[len(out)-1].zone != ep.zone {
			out = append(out, zoneEndpoints{zone: ep.zone, endpoints: all[len(all):]})
		}
		all = append(all, ep.endpoint)
		z := &out[len(out)-1]
		z.endpoints = z.endpoints[:len(z.endpoints)+1]
		if ep.health == envoy_config_core_v3.HealthStatus_HEALTHY {
			z.healthy++
		}
	}
	for i := range out {
		out[i].endpoints = slices.Clip(out[i].endpoints)
	}
	s.all = s.all[:len(s.all)+len(all)]
	s.zones = s.zones[:len(s.zones)+len(out)]
	return slices.Clip(out)
}

// compareHostPort orders endpoints by address, then port. Addresses
// compare numerically (10.0.0.9 before 10.0.0.10, IPv4 before IPv6); the
// slice's AddressType makes them IPs, and anything that is not sorts after
// them as text, which keeps the order total.
func compareHostPort(a, b hostPort) int {
	switch {
	case a.isIP && b.isIP:
		if c := a.ip.Compare(b.ip); c != 0 {
			return c
		}
	case a.isIP:
		return -1
	case b.isIP:
		return 1
	}
	return cmp.Or(cmp.Compare(a.host, b.host), cmp.Compare(a.port, b.port))
}

// newHostPort parses an endpoint address once. An IP is written the one
// way netip does, so that two spellings of one IPv6 address count as the
// same endpoint; an IPv4 address that parses is already written that way.
func newHostPort(s string, port int32) hostPort {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return hostPort{host: s, port: port}
	}
	if !a.Is4() {
		s = a.String()
	}
	return hostPort{host: s, port: port, ip: a, isIP: true}
}

// servicePortName finds the name of the Service's TCP port with the given
// number; EndpointSlices identify ports by that name, not by number.
func servicePortName(svc *objects.Service, port int32) (string, bool) {
	for _, sp := range svc.Spec.Ports {
		if sp.Port == port && (sp.Protocol == "" || sp.Protocol == corev1.ProtocolTCP) {
			return sp.Name, true
		}
	}
	return "", false
}

// slicePort finds the target port number of the named Service port in an
// EndpointSlice: found is false when the slice does not carry that port
// over TCP. An unnamed Service port appears with a nil name; a port
// without a number reads as 0, which is not a port.
func slicePort(es *objects.EndpointSlice, name string) (port int32, found bool) {
	for _, p := range es.Ports {
		if deref(p.Name) != name {
			continue
		}
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		return deref(p.Port), true
	}
	return 0, false
}

// endpointHealth maps EndpointSlice conditions: ready (or unknown, which
// Kubernetes says to read as ready) is HEALTHY; not ready but still
// serving while terminating is DRAINING, so that in-flight requests finish
// while no new ones arrive; anything else is left out.
func endpointHealth(c discoveryv1.EndpointConditions) (envoy_config_core_v3.HealthStatus, bool) {
	switch {
	case c.Ready == nil || *c.Ready:
		return envoy_config_core_v3.HealthStatus_HEALTHY, true
	case deref(c.Serving) && deref(c.Terminating):
		return envoy_config_core_v3.HealthStatus_DRAINING, true
	default:
		return envoy_config_core_v3.HealthStatus_UNKNOWN, false
	}
}

// nodeDrained reports whether the endpoint's Node carries the drain
// annotation.
func nodeDrained(snap *objects.Snapshot, nodeName *string) bool {
	if nodeName == nil {
		return false
	}
	n := snap.Nodes[*nodeName]
	return n != nil && objects.Drained(n.Annotations)
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
