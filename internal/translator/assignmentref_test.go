package translator

import (
	"slices"

	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
)

// The message forms of what the engine made of a cluster's load
// assignment for the gRPC and DNS groups before assignments were encoded
// from their data (Assignment.GRPC, RenameLoadAssignment): kept here as
// the references those are checked against.

// GRPCLoadAssignmentOf returns what GRPCLoadAssignment would of the
// arguments envoy, a LoadAssignment, was built from: envoy itself when it
// holds no duplicate to drop (so that the two groups share one encoding),
// else a deduplicated copy that shares every endpoint and locality with
// envoy. Neither may be modified afterwards.
func GRPCLoadAssignmentOf(envoy *envoy_config_endpoint_v3.ClusterLoadAssignment) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	if !hasDuplicates(envoy) {
		return envoy
	}
	cla := &envoy_config_endpoint_v3.ClusterLoadAssignment{
		ClusterName:    envoy.ClusterName,
		Endpoints:      make([]*envoy_config_endpoint_v3.LocalityLbEndpoints, len(envoy.Endpoints)),
		NamedEndpoints: envoy.NamedEndpoints,
		Policy:         envoy.Policy,
	}
	// dedupeEndpoints reorders cla.Endpoints, filters each LbEndpoints in
	// place and replaces LoadBalancingWeight: those are copied, the rest is
	// shared.
	for i, l := range envoy.Endpoints {
		cla.Endpoints[i] = &envoy_config_endpoint_v3.LocalityLbEndpoints{
			Locality:            l.Locality,
			Metadata:            l.Metadata,
			LbEndpoints:         slices.Clone(l.LbEndpoints),
			LbConfig:            l.LbConfig,
			LoadBalancingWeight: l.LoadBalancingWeight,
			Priority:            l.Priority,
			Proximity:           l.Proximity,
		}
	}
	dedupeEndpoints(cla)
	return cla
}

// LoadAssignmentAs returns LoadAssignment(name, spec, snap, opts) given
// cla, the LoadAssignment of the same spec under another name: the name is
// the only thing that differs, so the endpoints are shared, not copied, and
// neither may be modified afterwards. The DNS group serves each DNS name
// the assignment of the cluster behind it this way.
func LoadAssignmentAs(cla *envoy_config_endpoint_v3.ClusterLoadAssignment, name string) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	return &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: name, Endpoints: cla.Endpoints}
}

// hasDuplicates reports whether dedupeEndpoints would change cla: its
// localities are out of priority order, or a locality or an address
// appears twice.
func hasDuplicates(cla *envoy_config_endpoint_v3.ClusterLoadAssignment) bool {
	type address struct {
		host string
		port uint32
	}
	localities := map[localityKey]bool{}
	addresses := map[address]bool{}
	for i, l := range cla.Endpoints {
		if i > 0 && l.GetPriority() < cla.Endpoints[i-1].GetPriority() {
			return true
		}
		lk := localityKeyOf(l)
		if localities[lk] {
			return true
		}
		localities[lk] = true
		for _, ep := range l.LbEndpoints {
			// The same identity endpointAddress gives, without building it.
			sa := ep.GetEndpoint().GetAddress().GetSocketAddress()
			addr := address{sa.GetAddress(), sa.GetPortValue()}
			if addresses[addr] {
				return true
			}
			addresses[addr] = true
		}
	}
	return false
}
