package switchyard

import (
	"fmt"
	"strings"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
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
}

// decodeCluster validates a Cluster for a DNS balancer: its name must be
// usable as DNS labels and its endpoints must come over EDS on this stream.
func decodeCluster(c *envoy_config_cluster_v3.Cluster, version string) (*clusterInfo, error) {
	if err := c.ValidateAll(); err != nil {
		return nil, err
	}
	if err := checkDNSName(c.GetName()); err != nil {
		return nil, fmt.Errorf("name %q: %w", c.GetName(), err)
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
