package translator

import (
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// DNS translates the DAG into the resources served to DNS balancers (the
// CoreDNS plugin, any v3 ADS DNS client): CDS and EDS only, one cluster and
// one ClusterLoadAssignment per DNS name, both named by the DNS name. A DNS
// balancer answers a name with the endpoints of its assignment, so the
// names are what it subscribes to, not the content-hashed cluster names.
//
// The assignment is the same LoadAssignment Envoy gets for the cluster
// behind the name: IP-literal addresses (FQDN EndpointSlices are never
// read), localities weighted by service weight, priorities for failover,
// and every endpoint's health set explicitly (HEALTHY or DRAINING), since
// a DNS balancer has no health checks of its own to tell.
func DNS(d *dag.DAG, snap *objects.Snapshot, opts Options) *Resources {
	if d == nil {
		d = &dag.DAG{}
	}
	if snap == nil {
		snap = objects.NewSnapshot()
	}
	res := &Resources{}
	seen := map[string]bool{}
	for _, n := range d.DNSNames {
		if n.Cluster == nil || n.Name == "" || seen[n.Name] {
			continue
		}
		seen[n.Name] = true
		res.Clusters = append(res.Clusters, DNSCluster(n, opts))
		if ServesEndpoints(&n.Cluster.Spec) {
			res.Endpoints = append(res.Endpoints, LoadAssignment(n.Name, &n.Cluster.Spec, snap, opts))
		}
	}
	res.addMesh(d, func(name string) bool { return seen[name] }, func(ms *dag.MeshService) *Resources { return MeshDNS(ms, snap, opts) })
	res.sort()
	return res
}

// DNSCluster returns the CDS resource of a DNS name: EDS over ADS with the
// DNS name as cluster and service name, the load-balancing policy of the
// cluster behind it, and locality_weighted_lb_config so that the service
// weights in the localities apply. The connection-level settings of
// Envoy's cluster (transport socket, protocol options, health checks,
// circuit breakers, connect timeout) are left out: a DNS balancer opens no
// connection to the backends, and the transport socket would name SDS
// secrets this group does not serve. So no option applies to it either;
// it takes them as every other builder does.
//
// The name of an ExternalName Service is answered with a CNAME to its
// external name: its cluster is the DNS-resolved one Envoy gets (STRICT_DNS,
// the external name and port inline), without resolver settings, and it
// has no load assignment.
func DNSCluster(n dag.DNSName, _ Options) *envoy_config_cluster_v3.Cluster {
	if !ServesEndpoints(&n.Cluster.Spec) {
		return externalNameCluster(n.Name, &n.Cluster.Spec, envoy_config_cluster_v3.Cluster_STRICT_DNS, Options{})
	}
	return edsCluster(n.Name, &n.Cluster.Spec)
}
