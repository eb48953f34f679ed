package translator

import (
	"fmt"
	"net/netip"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_dns_resolver_cares_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/network/dns_resolver/cares/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// caresResolverName is the DNS resolver extension Envoy builds in on every
// platform but Apple's.
const caresResolverName = "envoy.network.dns_resolver.cares"

// DNSResolver is a name server the DNS-resolved clusters ask instead of
// the ones in Envoy's resolv.conf.
type DNSResolver struct {
	Addr netip.Addr
	Port uint32
}

// ServesEndpoints reports whether a cluster of spec takes its endpoints
// over EDS and so has a ClusterLoadAssignment. A cluster of an ExternalName
// Service resolves its name itself and has none: serving one would name a
// resource that no cluster asks for.
func ServesEndpoints(spec *dag.ClusterSpec) bool {
	_, _, ok := spec.ExternalName()
	return !ok
}

// externalNameCluster is edsCluster for an ExternalName Service: the
// external name and the Service port as the one endpoint of an inline
// load assignment, resolved by Envoy (typ STRICT_DNS, which balances over
// every address the name has) or by gRPC (LOGICAL_DNS, the only DNS type
// grpc-go accepts). One locality, so no locality weights: the weights of
// a route mixing such a Service with others are route-level
// weighted_clusters.
func externalNameCluster(name string, spec *dag.ClusterSpec, typ envoy_config_cluster_v3.Cluster_DiscoveryType, opts Options) *envoy_config_cluster_v3.Cluster {
	host, port, _ := spec.ExternalName()
	ep := &envoy_config_endpoint_v3.Endpoint{Address: socketAddress(host, uint32(port))}
	if hp := spec.Backends[0].HealthPort; hp > 0 {
		// An ExternalName has no target ports: the Service port is the port.
		ep.HealthCheckConfig = &envoy_config_endpoint_v3.Endpoint_HealthCheckConfig{PortValue: uint32(hp)}
	}
	out := &envoy_config_cluster_v3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: typ},
		LoadAssignment: &envoy_config_endpoint_v3.ClusterLoadAssignment{
			ClusterName: name,
			Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{{
				LbEndpoints: []*envoy_config_endpoint_v3.LbEndpoint{{
					HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: ep},
				}},
			}},
		},
		LbPolicy: lbPolicy(spec.LoadBalancer),
		// As for every cluster (see edsCluster): no panic mode, so that
		// health checks that fail every address mean no traffic to them.
		CommonLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig{HealthyPanicThreshold: &envoy_type_v3.Percent{}},
	}
	if typ == envoy_config_cluster_v3.Cluster_STRICT_DNS {
		setDNSResolution(out, opts)
	}
	return out
}

// setDNSResolution applies the --dns-resolvers and --dns-refresh-rate
// options to a cluster Envoy resolves by DNS. Unset options leave the
// fields unset, so that Envoy's defaults (the system resolvers, a refresh
// every 5s) apply.
func setDNSResolution(c *envoy_config_cluster_v3.Cluster, opts Options) {
	if opts.DNSRefreshRate > 0 {
		// Envoy 1.40 deprecates the field for the envoy.clusters.dns
		// extension but still honours it, and the cluster stays a plain
		// STRICT_DNS one that every Envoy of the supported range reads.
		c.DnsRefreshRate = duration(opts.DNSRefreshRate) //nolint:staticcheck // see above
	}
	if len(opts.DNSResolvers) == 0 {
		return
	}
	cfg := &envoy_dns_resolver_cares_v3.CaresDnsResolverConfig{}
	for _, r := range opts.DNSResolvers {
		addr := socketAddress(r.Addr.String(), r.Port)
		// Name servers answer over UDP first.
		addr.GetSocketAddress().Protocol = envoy_config_core_v3.SocketAddress_UDP
		cfg.Resolvers = append(cfg.Resolvers, addr)
	}
	c.TypedDnsResolverConfig = &envoy_config_core_v3.TypedExtensionConfig{Name: caresResolverName, TypedConfig: toAny(cfg)}
}

// defaultDNSPort is the port of a --dns-resolvers entry without one.
const defaultDNSPort = 53

// ParseDNSResolver reads one --dns-resolvers entry, IP or IP:PORT (an IPv6
// address with a port in brackets). Names are refused: resolving a name
// server's name would itself need a name server.
func ParseDNSResolver(s string) (DNSResolver, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if ap.Port() == 0 || ap.Addr().Zone() != "" {
			return DNSResolver{}, fmt.Errorf("%q: give a port in 1-65535 and an address without a zone, such as 10.0.0.10:5353 (or no port, for 53)", s)
		}
		return DNSResolver{Addr: ap.Addr().Unmap(), Port: uint32(ap.Port())}, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return DNSResolver{}, fmt.Errorf("%q is not IP or IP:PORT: give a name server by address, such as 10.0.0.10 or 10.0.0.10:5353, and an IPv6 one with a port as [fd00::10]:5353", s)
	}
	return DNSResolver{Addr: a.Unmap(), Port: defaultDNSPort}, nil
}

// CheckDNSRefreshRate checks a --dns-refresh-rate: Envoy requires more
// than a millisecond; 0 leaves Envoy's default.
func CheckDNSRefreshRate(d time.Duration) error {
	if d < 0 || (d > 0 && d <= time.Millisecond) {
		return fmt.Errorf("%v is not a refresh rate: give a duration above 1ms, such as 30s (leave it out for Envoy's 5s)", d)
	}
	return nil
}
