package switchyard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
)

// health is an endpoint's health as selection sees it.
type health uint8

// The health classes, from most to least usable.
const (
	healthHealthy   health = iota // HEALTHY
	healthUnknown                 // UNKNOWN (unset): usable, as in Envoy
	healthDegraded                // DEGRADED: used only when nothing better is left
	healthDraining                // DRAINING: never answered, excluded from the health ratios
	healthUnhealthy               // UNHEALTHY, TIMEOUT
	numHealth
)

var healthNames = [numHealth]string{"healthy", "unknown", "degraded", "draining", "unhealthy"}

func (h health) String() string { return healthNames[h] }

func healthOf(s envoy_config_core_v3.HealthStatus) health {
	switch s {
	case envoy_config_core_v3.HealthStatus_HEALTHY:
		return healthHealthy
	case envoy_config_core_v3.HealthStatus_DEGRADED:
		return healthDegraded
	case envoy_config_core_v3.HealthStatus_DRAINING:
		return healthDraining
	case envoy_config_core_v3.HealthStatus_UNHEALTHY, envoy_config_core_v3.HealthStatus_TIMEOUT:
		return healthUnhealthy
	}
	return healthUnknown
}

// usable reports whether the endpoint may be answered at all.
func (h health) usable() bool { return h <= healthDegraded }

// family is an address family; familyAny is both, used for SRV.
type family uint8

const (
	familyV4 family = iota
	familyV6
	familyAny
	numFamilies
)

// endpoint is one address of a load assignment. Endpoints are immutable
// once built and shared by every table that holds their assignment.
type endpoint struct {
	addr     netip.Addr
	ip       net.IP // addr as a slice, shared by every answer that carries it
	port     uint16
	weight   uint32
	health   health
	priority uint32
	locality int    // index in assignment.localities
	index    int    // index in assignment.endpoints
	label    string // the address as a DNS label, see addrLabel
}

func (e *endpoint) family() family {
	if e.addr.Is4() {
		return familyV4
	}
	return familyV6
}

// locality is one LocalityLbEndpoints of an assignment.
type locality struct {
	region, zone, subZone string
	weight                uint32
	priority              uint32
}

func (l locality) String() string {
	return strings.Join([]string{l.region, l.zone, l.subZone}, "/")
}

// assignment is a validated ClusterLoadAssignment.
type assignment struct {
	version string // version_info of the response that carried it
	// overprovisioning is Envoy's overprovisioning factor in percent.
	overprovisioning uint32
	localities       []locality
	// endpoints are sorted by priority, locality and address.
	endpoints   []endpoint
	maxPriority uint32
}

// defaultOverprovisioning is Envoy's default overprovisioning factor, 1.4.
const defaultOverprovisioning = 140

// decodeAssignment validates a ClusterLoadAssignment and converts it. It
// rejects what a DNS balancer cannot answer faithfully: endpoints that are
// not IP literals (hostnames would need a resolver, and answering them would
// silently turn the control plane's addresses into CNAME-like indirection),
// named ports, and endpoints delivered some other way (LEDS, endpoint names).
func decodeAssignment(cla *envoy_config_endpoint_v3.ClusterLoadAssignment, version string) (*assignment, error) {
	if err := cla.ValidateAll(); err != nil {
		return nil, err
	}
	a := &assignment{
		version:          version,
		overprovisioning: defaultOverprovisioning,
	}
	if f := cla.GetPolicy().GetOverprovisioningFactor(); f != nil {
		a.overprovisioning = f.GetValue()
	}
	var errs []error
	for i, lle := range cla.GetEndpoints() {
		if lle.GetLedsClusterLocalityConfig() != nil {
			errs = append(errs, fmt.Errorf("endpoints[%d]: LEDS is not supported; list lb_endpoints inline", i))
			continue
		}
		loc := locality{
			region:   lle.GetLocality().GetRegion(),
			zone:     lle.GetLocality().GetZone(),
			subZone:  lle.GetLocality().GetSubZone(),
			weight:   lle.GetLoadBalancingWeight().GetValue(),
			priority: lle.GetPriority(),
		}
		idx := len(a.localities)
		a.localities = append(a.localities, loc)
		a.maxPriority = max(a.maxPriority, loc.priority)
		for j, lbe := range lle.GetLbEndpoints() {
			ep, err := decodeEndpoint(lbe)
			if err != nil {
				errs = append(errs, fmt.Errorf("endpoints[%d].lb_endpoints[%d]: %w", i, j, err))
				continue
			}
			ep.priority = loc.priority
			ep.locality = idx
			a.endpoints = append(a.endpoints, ep)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.SliceStable(a.endpoints, func(i, j int) bool {
		x, y := &a.endpoints[i], &a.endpoints[j]
		if x.priority != y.priority {
			return x.priority < y.priority
		}
		if x.locality != y.locality {
			return x.locality < y.locality
		}
		if c := x.addr.Compare(y.addr); c != 0 {
			return c < 0
		}
		return x.port < y.port
	})
	for i := range a.endpoints {
		a.endpoints[i].index = i
	}
	return a, nil
}

func decodeEndpoint(lbe *envoy_config_endpoint_v3.LbEndpoint) (endpoint, error) {
	if lbe.GetEndpointName() != "" {
		return endpoint{}, fmt.Errorf("endpoint_name %q: named endpoints are not supported; send the endpoint inline", lbe.GetEndpointName())
	}
	sa := lbe.GetEndpoint().GetAddress().GetSocketAddress()
	if sa == nil {
		return endpoint{}, errors.New("endpoint.address: want a socket_address with an IP literal")
	}
	if sa.GetResolverName() != "" {
		return endpoint{}, fmt.Errorf("socket_address.resolver_name %q: custom resolvers are not supported; send an IP literal", sa.GetResolverName())
	}
	if sa.GetNamedPort() != "" {
		return endpoint{}, fmt.Errorf("socket_address.named_port %q: want port_value", sa.GetNamedPort())
	}
	addr, err := netip.ParseAddr(sa.GetAddress())
	if err != nil || addr.Zone() != "" {
		return endpoint{}, fmt.Errorf("socket_address.address %q is not an IP literal", sa.GetAddress())
	}
	addr = addr.Unmap()
	if sa.GetPortValue() > 65535 {
		return endpoint{}, fmt.Errorf("socket_address.port_value %d is out of range", sa.GetPortValue())
	}
	weight := uint32(1)
	if w := lbe.GetLoadBalancingWeight(); w != nil {
		weight = w.GetValue()
	}
	return endpoint{
		addr:   addr,
		ip:     net.IP(addr.AsSlice()),
		port:   uint16(sa.GetPortValue()),
		weight: weight,
		health: healthOf(lbe.GetHealthStatus()),
		label:  addrLabel(addr),
	}, nil
}

// addrLabel writes an address as one DNS label: 10.0.0.1 is "10-0-0-1",
// 2001:db8::1 is "2001-db8-0-0-0-0-0-1". The label is stable for the
// address (unlike an index), so an SRV target cached by a resolver never
// points at a different endpoint after an update.
func addrLabel(a netip.Addr) string {
	if a.Is4() {
		return strings.ReplaceAll(a.String(), ".", "-")
	}
	b := a.As16()
	parts := make([]string, 8)
	for i := range parts {
		parts[i] = fmt.Sprintf("%x", uint16(b[2*i])<<8|uint16(b[2*i+1]))
	}
	return strings.Join(parts, "-")
}

// parseAddrLabel is the inverse of addrLabel; it accepts only the exact
// form addrLabel writes, so every address has one name.
func parseAddrLabel(label string) (netip.Addr, bool) {
	var s string
	switch strings.Count(label, "-") {
	case 3:
		s = strings.ReplaceAll(label, "-", ".")
	case 7:
		s = strings.ReplaceAll(label, "-", ":")
	default:
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" || a.Is4In6() || addrLabel(a) != label {
		return netip.Addr{}, false
	}
	return a, true
}
