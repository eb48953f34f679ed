package translator

import (
	"cmp"
	"net"
	"slices"
	"strconv"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// GRPCClusters returns the clusters a host's routes forward to for gRPC
// clients, unique and sorted by name. Mirrors, authorization servers and
// TCP proxies have no part in gRPC routing, and clusters whose backends
// need upstream certificate validation are never among them: the routes
// to them answer a direct response instead (see grpcRefused).
func GRPCClusters(h GRPCHost) []*dag.Cluster {
	routes, authz := grpcRoutes(h)
	byName := map[string]*dag.Cluster{}
	for _, r := range routes {
		if r == nil || r.Forward == nil || r.HTTPSRedirect || len(r.QueryParamMatches) > 0 {
			continue
		}
		if _, _, refused := grpcRefused(r, authz); refused {
			continue
		}
		if c := r.Forward.Cluster; c != nil {
			byName[c.Name] = c
			continue
		}
		for _, w := range r.Forward.Weighted {
			if w.Cluster != nil && w.Weight > 0 {
				byName[w.Cluster.Name] = w.Cluster
			}
		}
	}
	out := make([]*dag.Cluster, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *dag.Cluster) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// GRPCCluster returns the CDS resource of a DAG cluster for gRPC clients:
// Envoy's (EDS over ADS, service_name = cluster name), with two changes.
//
//   - lb_policy RANDOM, which gRPC NACKs, becomes ROUND_ROBIN. The other
//     policies Switchyard uses (ROUND_ROBIN, LEAST_REQUEST, RING_HASH with
//     the default XX_HASH) are accepted.
//   - no transport_socket. gRPC validates an UpstreamTlsContext even on a
//     channel that does not use it, and NACKs one without a root
//     certificate-provider instance, which Envoy's never have. Clusters
//     that verify their backends are left out of the group (GRPCClusters);
//     for the rest (protocol tls or h2 without validation, which Envoy does
//     not verify either) the client's own channel credentials decide how
//     to reach the backends.
//
// The fields gRPC ignores (health checks, connect timeout, protocol
// options, common_lb_config) are left as they are; gRPC applies locality
// weights under ROUND_ROBIN whether or not locality_weighted_lb_config is
// set.
//
// The cluster of an ExternalName Service is LOGICAL_DNS, the one DNS type
// grpc-go accepts (with exactly the one inline endpoint it has), without
// Envoy's resolver settings: gRPC resolves the name with its own resolver.
func GRPCCluster(c *dag.Cluster, opts Options) *envoy_config_cluster_v3.Cluster {
	if !ServesEndpoints(&c.Spec) {
		opts.DNSResolvers, opts.DNSRefreshRate = nil, 0
	}
	out := clusterWithoutTLS(c, opts)
	if !ServesEndpoints(&c.Spec) {
		out.ClusterDiscoveryType = &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_LOGICAL_DNS}
	}
	if out.LbPolicy == envoy_config_cluster_v3.Cluster_RANDOM {
		out.LbPolicy = envoy_config_cluster_v3.Cluster_ROUND_ROBIN
	}
	return out
}

// GRPCClusterOf returns GRPCCluster(c, opts) given envoy, the Cluster(c,
// opts) already built: envoy itself when GRPCCluster would change nothing
// in it (so that the two groups share one encoding), else a new one.
// Neither may be modified afterwards.
func GRPCClusterOf(envoy *envoy_config_cluster_v3.Cluster, c *dag.Cluster, opts Options) *envoy_config_cluster_v3.Cluster {
	if envoy.LbPolicy != envoy_config_cluster_v3.Cluster_RANDOM && envoy.TransportSocket == nil && envoy.GetType() == envoy_config_cluster_v3.Cluster_EDS {
		return envoy
	}
	return GRPCCluster(c, opts)
}

// GRPCLoadAssignment is LoadAssignment for gRPC clients. gRPC NACKs a
// ClusterLoadAssignment in which one address appears twice anywhere
// (across localities and priorities), or one locality twice in a
// priority. Both happen when two Services of a route select the same pods,
// so later duplicates are dropped: the first occurrence, by priority and
// then locality order, is kept.
//
// A locality that loses healthy endpoints that way keeps the share of the
// ones it still has: its weight is scaled by remaining/original healthy
// endpoints (at least 1). Otherwise the endpoints left would take the
// whole weight meant for all of them, and a pod that only the second
// Service selects would carry that Service's entire share. A locality left
// without endpoints stays, with a weight that carries no traffic in gRPC,
// so that its priority level never disappears (gRPC requires priorities
// contiguous from 0).
func GRPCLoadAssignment(name string, spec *dag.ClusterSpec, snap *objects.Snapshot, opts Options) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	cla := LoadAssignment(name, spec, snap, opts)
	dedupeEndpoints(cla)
	return cla
}

// localityKey identifies a locality within its priority, as gRPC compares
// them.
type localityKey struct {
	priority              uint32
	region, zone, subZone string
}

func localityKeyOf(l *envoy_config_endpoint_v3.LocalityLbEndpoints) localityKey {
	return localityKey{l.GetPriority(), l.GetLocality().GetRegion(), l.GetLocality().GetZone(), l.GetLocality().GetSubZone()}
}

// dedupeEndpoints drops, in place, every locality already seen at its
// priority and every endpoint address already seen in the assignment, and
// rescales the weights of localities that lost healthy endpoints (see
// GRPCLoadAssignment).
func dedupeEndpoints(cla *envoy_config_endpoint_v3.ClusterLoadAssignment) {
	slices.SortStableFunc(cla.Endpoints, func(a, b *envoy_config_endpoint_v3.LocalityLbEndpoints) int {
		return cmp.Compare(a.GetPriority(), b.GetPriority())
	})
	localities := map[localityKey]bool{}
	addresses := map[string]bool{}
	kept := cla.Endpoints[:0]
	for _, l := range cla.Endpoints {
		lk := localityKeyOf(l)
		if localities[lk] {
			continue
		}
		localities[lk] = true
		healthyBefore := countHealthy(l.LbEndpoints)
		eps := l.LbEndpoints[:0]
		for _, ep := range l.LbEndpoints {
			addr := endpointAddress(ep)
			if addresses[addr] {
				continue
			}
			addresses[addr] = true
			eps = append(eps, ep)
		}
		l.LbEndpoints = eps
		if healthyAfter := countHealthy(eps); healthyAfter < healthyBefore && l.LoadBalancingWeight != nil {
			w := uint64(l.LoadBalancingWeight.GetValue()) * uint64(healthyAfter) / uint64(healthyBefore)
			l.LoadBalancingWeight = u32(uint32(max(w, 1)))
		}
		kept = append(kept, l)
	}
	cla.Endpoints = kept
}

func countHealthy(eps []*envoy_config_endpoint_v3.LbEndpoint) int {
	n := 0
	for _, ep := range eps {
		if ep.GetHealthStatus() == envoy_config_core_v3.HealthStatus_HEALTHY {
			n++
		}
	}
	return n
}

// endpointAddress is the "host:port" gRPC dials for an endpoint, the key
// gRPC compares for duplicates.
func endpointAddress(ep *envoy_config_endpoint_v3.LbEndpoint) string {
	sa := ep.GetEndpoint().GetAddress().GetSocketAddress()
	return net.JoinHostPort(sa.GetAddress(), strconv.FormatUint(uint64(sa.GetPortValue()), 10))
}
