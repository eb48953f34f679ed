// Package xdstest runs Switchyard's real xDS server (internal/xdscache)
// on a loopback port for the DNS balancer's tests, and builds the
// DNS-group resources it serves: one EDS Cluster per DNS name and its
// ClusterLoadAssignment, shaped as the translator shapes them (a locality
// per service and zone, the service weight as locality weight, explicit
// health, priorities).
package xdstest

import (
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Port is the port of every endpoint built here.
const Port = 8080

// Endpoint is an endpoint on Port; weight 0 leaves the weight unset.
func Endpoint(addr string, h envoy_config_core_v3.HealthStatus, weight uint32) *envoy_config_endpoint_v3.LbEndpoint {
	e := &envoy_config_endpoint_v3.LbEndpoint{
		HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: &envoy_config_endpoint_v3.Endpoint{
			Address: &envoy_config_core_v3.Address{Address: &envoy_config_core_v3.Address_SocketAddress{SocketAddress: &envoy_config_core_v3.SocketAddress{
				Address:       addr,
				PortSpecifier: &envoy_config_core_v3.SocketAddress_PortValue{PortValue: Port},
			}}},
		}},
		HealthStatus: h,
	}
	if weight > 0 {
		e.LoadBalancingWeight = wrapperspb.UInt32(weight)
	}
	return e
}

// Locality is a locality {zone, sub_zone} of a priority; weight 0 leaves
// the weight unset.
func Locality(zone, subZone string, priority, weight uint32, eps ...*envoy_config_endpoint_v3.LbEndpoint) *envoy_config_endpoint_v3.LocalityLbEndpoints {
	l := &envoy_config_endpoint_v3.LocalityLbEndpoints{
		Locality:    &envoy_config_core_v3.Locality{Zone: zone, SubZone: subZone},
		LbEndpoints: eps,
		Priority:    priority,
	}
	if weight > 0 {
		l.LoadBalancingWeight = wrapperspb.UInt32(weight)
	}
	return l
}

// Assignment is the ClusterLoadAssignment of a DNS name.
func Assignment(name string, locs ...*envoy_config_endpoint_v3.LocalityLbEndpoints) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	return &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: name, Endpoints: locs}
}

// Cluster is the EDS cluster of a DNS name: endpoints over ADS with the
// cluster's name as service name, locality weighted.
func Cluster(name string) *envoy_config_cluster_v3.Cluster {
	return &envoy_config_cluster_v3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_EDS},
		EdsClusterConfig: &envoy_config_cluster_v3.Cluster_EdsClusterConfig{
			EdsConfig: &envoy_config_core_v3.ConfigSource{
				ConfigSourceSpecifier: &envoy_config_core_v3.ConfigSource_Ads{Ads: &envoy_config_core_v3.AggregatedConfigSource{}},
				ResourceApiVersion:    envoy_config_core_v3.ApiVersion_V3,
			},
			ServiceName: name,
		},
		CommonLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig{
			LocalityConfigSpecifier: &envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig_{
				LocalityWeightedLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig{},
			},
		},
	}
}
