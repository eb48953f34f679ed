// Package translator turns the DAG into Envoy v3 xDS resources.
//
// Every function here is pure: the output depends only on the arguments, no
// goroutines, clocks, package-level state or I/O are involved, and the same
// input always yields the same bytes (site/architecture.md, decision 7). That is what
// lets xdscache derive resource versions from content (decision 5) and lets
// the incremental engine call one builder at a time — one route
// configuration, one cluster, one ClusterLoadAssignment — instead of
// translating the world.
//
// Envoy builds the whole resource set for the "envoy" consumer group. The
// per-unit builders it calls (HTTPListener, HTTPSListener, ScopedRoute,
// HTTPRouteConfig, HTTPSRouteConfig, Cluster, LoadAssignment, Secret) are
// exported so that the other consumer groups and the EDS fast path
// (decision 4) can reuse them.
package translator

import (
	"cmp"
	"slices"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Options are the deployment-wide settings that are not part of the DAG:
// where Envoy listens and how it treats endpoints operators are draining.
type Options struct {
	// ListenAddress is the address both listeners bind, "0.0.0.0" by default.
	ListenAddress string
	// HTTPPort and HTTPSPort are the plain-HTTP and TLS listener ports.
	HTTPPort  uint32
	HTTPSPort uint32
	// ConnectTimeout bounds upstream connection setup; zero leaves Envoy's
	// default (5s).
	ConnectTimeout time.Duration
	// DrainZones lists topology zones whose endpoints are reported DRAINING,
	// so that an operator can move traffic out of a zone without touching
	// any Service.
	DrainZones []string
	// KeepUnusableEndpoints makes LoadAssignment emit the endpoints it
	// would leave out as unusable (EndpointProblems): addresses that are
	// not IP literals, ports above 65535. It is how the tests of the gate
	// (internal/pipeline) get a translator that emits what clients
	// reject; nothing else sets it.
	KeepUnusableEndpoints bool
	// DNSResolvers are the name servers of the clusters Envoy resolves by
	// DNS (ExternalName Services, JWKS hosts); empty leaves Envoy's
	// (resolv.conf).
	DNSResolvers []DNSResolver
	// DNSRefreshRate is how often those clusters resolve again; zero
	// leaves Envoy's default (5s).
	DNSRefreshRate time.Duration
}

// DefaultOptions returns the options Switchyard runs with unless told
// otherwise: unprivileged ports, so that Envoy needs no NET_BIND_SERVICE.
func DefaultOptions() Options {
	return Options{
		ListenAddress:  "0.0.0.0",
		HTTPPort:       8080,
		HTTPSPort:      8443,
		ConnectTimeout: 2 * time.Second,
	}
}

// Resources is one consumer group's resources. Each slice is sorted by
// resource name, so that two translations of the same DAG compare equal
// element by element.
type Resources struct {
	Listeners    []*envoy_config_listener_v3.Listener
	ScopedRoutes []*envoy_config_route_v3.ScopedRouteConfiguration
	Routes       []*envoy_config_route_v3.RouteConfiguration
	Clusters     []*envoy_config_cluster_v3.Cluster
	Endpoints    []*envoy_config_endpoint_v3.ClusterLoadAssignment
	Secrets      []*envoy_transport_socket_tls_v3.Secret
}

// Envoy translates the DAG into the resources served to Envoy proxies: the
// two listeners, one scope and one route configuration per plain-HTTP
// virtual host, one route configuration per secure virtual host that serves
// routes, and one cluster, load assignment and secret per DAG entry.
//
// A nil DAG or snapshot is treated as empty, so that a control plane that
// has not finished its first build still serves a valid (empty) ingress.
func Envoy(d *dag.DAG, snap *objects.Snapshot, opts Options) *Resources {
	if d == nil {
		d = &dag.DAG{}
	}
	if snap == nil {
		snap = objects.NewSnapshot()
	}
	res := &Resources{}

	res.Listeners = append(res.Listeners, HTTPListener(opts, plainHosts(d.VirtualHosts), plainRateLimitService(d.VirtualHosts)))
	if l := HTTPSListener(d.SecureVirtualHosts, opts); l != nil {
		res.Listeners = append(res.Listeners, l)
	}

	for _, vh := range uniqueVirtualHosts(d.VirtualHosts) {
		res.ScopedRoutes = append(res.ScopedRoutes, ScopedRoute(vh))
		res.Routes = append(res.Routes, HTTPRouteConfig(vh))
	}
	secure := uniqueSecureVirtualHosts(d.SecureVirtualHosts)
	for _, svh := range secure {
		if rc := HTTPSRouteConfig(svh); rc != nil {
			res.Routes = append(res.Routes, rc)
		}
		res.Clusters = append(res.Clusters, JWKSClusters(svh, opts)...)
	}
	if rc := FallbackRouteConfig(fallbackVirtualHosts(secure)); rc != nil {
		res.Routes = append(res.Routes, rc)
	}

	for _, c := range d.Clusters {
		if c == nil {
			continue
		}
		res.Clusters = append(res.Clusters, Cluster(c, opts))
		if ServesEndpoints(&c.Spec) {
			res.Endpoints = append(res.Endpoints, LoadAssignment(c.Name, &c.Spec, snap, opts))
		}
	}
	for _, s := range d.Secrets {
		if s == nil {
			continue
		}
		res.Secrets = append(res.Secrets, Secret(s))
	}

	res.sort()
	return res
}

// All returns every resource, listeners first and secrets last, each type
// in name order.
func (r *Resources) All() []proto.Message {
	out := make([]proto.Message, 0, len(r.Listeners)+len(r.ScopedRoutes)+len(r.Routes)+len(r.Clusters)+len(r.Endpoints)+len(r.Secrets))
	for _, m := range r.Listeners {
		out = append(out, m)
	}
	for _, m := range r.ScopedRoutes {
		out = append(out, m)
	}
	for _, m := range r.Routes {
		out = append(out, m)
	}
	for _, m := range r.Clusters {
		out = append(out, m)
	}
	for _, m := range r.Endpoints {
		out = append(out, m)
	}
	for _, m := range r.Secrets {
		out = append(out, m)
	}
	return out
}

// sort orders every slice by resource name. The DAG already hands things
// over sorted, but the wire order must not depend on that promise.
func (r *Resources) sort() {
	slices.SortStableFunc(r.Listeners, byName[*envoy_config_listener_v3.Listener])
	slices.SortStableFunc(r.ScopedRoutes, byName[*envoy_config_route_v3.ScopedRouteConfiguration])
	slices.SortStableFunc(r.Routes, byName[*envoy_config_route_v3.RouteConfiguration])
	slices.SortStableFunc(r.Clusters, byName[*envoy_config_cluster_v3.Cluster])
	slices.SortStableFunc(r.Endpoints, func(a, b *envoy_config_endpoint_v3.ClusterLoadAssignment) int {
		return cmp.Compare(a.GetClusterName(), b.GetClusterName())
	})
	slices.SortStableFunc(r.Secrets, byName[*envoy_transport_socket_tls_v3.Secret])
}

// named is any resource with a name.
type named interface{ GetName() string }

func byName[T named](a, b T) int { return cmp.Compare(a.GetName(), b.GetName()) }

// uniqueVirtualHosts drops nil entries and every virtual host whose FQDN was
// already seen. The DAG never produces duplicates, but one slipping through
// would make two scopes share a key, and Envoy rejects the whole SRDS update
// on a scope-key conflict — taking down every plain-HTTP host instead of one
// (site/architecture.md, decision 6).
func uniqueVirtualHosts(in []*dag.VirtualHost) []*dag.VirtualHost {
	seen := make(map[string]bool, len(in))
	out := make([]*dag.VirtualHost, 0, len(in))
	for _, vh := range in {
		if vh == nil || seen[vh.FQDN] {
			continue
		}
		seen[vh.FQDN] = true
		out = append(out, vh)
	}
	return out
}

// uniqueSecureVirtualHosts is uniqueVirtualHosts for the HTTPS listener,
// where two filter chains with the same server name would make Envoy reject
// the listener.
func uniqueSecureVirtualHosts(in []*dag.SecureVirtualHost) []*dag.SecureVirtualHost {
	seen := make(map[string]bool, len(in))
	out := make([]*dag.SecureVirtualHost, 0, len(in))
	for _, svh := range in {
		if svh == nil || seen[svh.FQDN] {
			continue
		}
		seen[svh.FQDN] = true
		out = append(out, svh)
	}
	return out
}
