package switchyard

import (
	"fmt"
	"net/netip"
	"strings"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/miekg/dns"
)

// clusterInfo is what the plugin keeps of a Cluster: its name is the DNS
// name it answers, and its EDS service name finds its endpoints.
type clusterInfo struct {
	name        string
	serviceName string
	version     string // version_info of the CDS response it last changed in
	// localityWeighted is common_lb_config.locality_weighted_lb_config:
	// without it Envoy ignores locality weights and picks among all
	// endpoints of a priority by endpoint weight, and so does the plugin.
	localityWeighted bool
	// cname, fully qualified, is set for a cluster resolved by DNS (an
	// ExternalName Service): its name is answered with a CNAME to the one
	// host of its inline load assignment, and it has no EDS service.
	cname string
}

// decodeCluster validates a Cluster for a DNS balancer: its name must be
// usable as DNS labels and its endpoints must come over EDS on this stream,
// or it is resolved by DNS and answered with a CNAME (see cnameTarget).
func decodeCluster(c *envoy_config_cluster_v3.Cluster, version string) (*clusterInfo, error) {
	if err := c.ValidateAll(); err != nil {
		return nil, err
	}
	if err := checkDNSName(c.GetName()); err != nil {
		return nil, fmt.Errorf("name %q: %w", c.GetName(), err)
	}
	if t := c.GetType(); (t == envoy_config_cluster_v3.Cluster_STRICT_DNS || t == envoy_config_cluster_v3.Cluster_LOGICAL_DNS) && c.GetClusterType() == nil {
		target, err := cnameTarget(c)
		if err != nil {
			return nil, fmt.Errorf("cluster %q: %w", c.GetName(), err)
		}
		return &clusterInfo{name: c.GetName(), version: version, cname: target}, nil
	}
	if c.GetType() != envoy_config_cluster_v3.Cluster_EDS || c.GetClusterType() != nil {
		return nil, fmt.Errorf("cluster %q: type %s: a DNS balancer answers only EDS clusters", c.GetName(), clusterType(c))
	}
	switch c.GetEdsClusterConfig().GetEdsConfig().GetConfigSourceSpecifier().(type) {
	case nil, *envoy_config_core_v3.ConfigSource_Ads, *envoy_config_core_v3.ConfigSource_Self:
	default:
		return nil, fmt.Errorf("cluster %q: eds_config must be ads or self; endpoints from another config source are not followed", c.GetName())
	}
	svc := c.GetEdsClusterConfig().GetServiceName()
	if svc == "" {
		svc = c.GetName()
	}
	return &clusterInfo{
		name:             c.GetName(),
		serviceName:      svc,
		version:          version,
		localityWeighted: c.GetCommonLbConfig().GetLocalityWeightedLbConfig() != nil,
	}, nil
}

// cnameTarget is the host a DNS-resolved cluster resolves: the one endpoint
// of its inline load assignment, a DNS name (an IP literal would need an
// A record, not a CNAME). Several hosts, which Envoy would balance over,
// cannot be one CNAME.
func cnameTarget(c *envoy_config_cluster_v3.Cluster) (string, error) {
	var hosts []string
	for _, l := range c.GetLoadAssignment().GetEndpoints() {
		for _, ep := range l.GetLbEndpoints() {
			hosts = append(hosts, ep.GetEndpoint().GetAddress().GetSocketAddress().GetAddress())
		}
	}
	if len(hosts) != 1 {
		return "", fmt.Errorf("type %s with %d endpoints: a DNS balancer answers a DNS-resolved cluster with a CNAME to its one host", c.GetType(), len(hosts))
	}
	host := strings.TrimSuffix(strings.ToLower(hosts[0]), ".")
	if _, err := netip.ParseAddr(host); err == nil {
		return "", fmt.Errorf("endpoint %s is an address, not a name to answer with a CNAME", host)
	}
	if _, ok := dns.IsDomainName(host); !ok || host == "" {
		return "", fmt.Errorf("endpoint %q is not a DNS name", hosts[0])
	}
	return dns.Fqdn(host), nil
}

func clusterType(c *envoy_config_cluster_v3.Cluster) string {
	if ct := c.GetClusterType(); ct != nil {
		return "custom " + ct.GetName()
	}
	return c.GetType().String()
}

// checkDNSName reports whether a cluster name can be answered as a
// relative DNS name: lowercase labels of letters, digits, '-' and '_', each
// 1 to 63 bytes, 200 bytes at most so that a zone still fits.
func checkDNSName(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	if len(name) > 200 {
		return fmt.Errorf("longer than 200 bytes, leaving no room for a zone")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" {
			return fmt.Errorf("empty label")
		}
		if len(label) > 63 {
			return fmt.Errorf("label %q is longer than 63 bytes", label)
		}
		for i := 0; i < len(label); i++ {
			switch b := label[i]; {
			case b >= 'a' && b <= 'z', b >= '0' && b <= '9', b == '-', b == '_':
			default:
				return fmt.Errorf("label %q: byte %q is not a lowercase letter, digit, '-' or '_'", label, b)
			}
		}
	}
	return nil
}
