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
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/translator"
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

// Cluster is the EDS cluster of a DNS name as the translator builds it
// for the dns group, from a cluster with the default spec.
func Cluster(name string) *envoy_config_cluster_v3.Cluster {
	return translator.DNSCluster(dag.DNSName{Name: name, Cluster: &dag.Cluster{}}, translator.DefaultOptions())
}

// ExternalNameCluster is the cluster of a DNS name whose route goes to an
// ExternalName Service, as the translator builds it for the dns group.
func ExternalNameCluster(name, externalName string, port int32) *envoy_config_cluster_v3.Cluster {
	spec := dag.ClusterSpec{Backends: []dag.Backend{{Service: types.NamespacedName{Namespace: "shop", Name: "external"}, Port: port, Weight: 1, ExternalName: externalName}}}
	return translator.DNSCluster(dag.DNSName{Name: name, Cluster: &dag.Cluster{Spec: spec}}, translator.DefaultOptions())
}
