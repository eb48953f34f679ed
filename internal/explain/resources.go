package explain

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/render"
)

// Resources are the xDS resources of one consumer group, by name.
type Resources struct {
	Listeners map[string]*envoy_config_listener_v3.Listener
	Routes    map[string]*envoy_config_route_v3.RouteConfiguration
	Scopes    []*envoy_config_route_v3.ScopedRouteConfiguration
	Clusters  map[string]*envoy_config_cluster_v3.Cluster
	Endpoints map[string]*envoy_config_endpoint_v3.ClusterLoadAssignment
	// Problems are the errors in each HTTPProxy's status, keyed by
	// "namespace/name": a decision that names an HTTPProxy quotes them.
	Problems map[string][]string
}

// NewResources indexes resources of any xDS type; those explain does not
// read (secrets, for one) are left out.
func NewResources(msgs []proto.Message) *Resources {
	r := &Resources{
		Listeners: map[string]*envoy_config_listener_v3.Listener{},
		Routes:    map[string]*envoy_config_route_v3.RouteConfiguration{},
		Clusters:  map[string]*envoy_config_cluster_v3.Cluster{},
		Endpoints: map[string]*envoy_config_endpoint_v3.ClusterLoadAssignment{},
		Problems:  map[string][]string{},
	}
	for _, m := range msgs {
		switch v := m.(type) {
		case *envoy_config_listener_v3.Listener:
			r.Listeners[v.GetName()] = v
		case *envoy_config_route_v3.RouteConfiguration:
			r.Routes[v.GetName()] = v
		case *envoy_config_route_v3.ScopedRouteConfiguration:
			r.Scopes = append(r.Scopes, v)
		case *envoy_config_cluster_v3.Cluster:
			r.Clusters[v.GetName()] = v
		case *envoy_config_endpoint_v3.ClusterLoadAssignment:
			r.Endpoints[v.GetClusterName()] = v
		}
	}
	slices.SortFunc(r.Scopes, func(a, b *envoy_config_route_v3.ScopedRouteConfiguration) int {
		return cmp.Compare(a.GetName(), b.GetName())
	})
	return r
}

// listenerNames returns the listener names, sorted, so that every choice
// among them is deterministic.
func (r *Resources) listenerNames() []string {
	names := make([]string, 0, len(r.Listeners))
	for n := range r.Listeners {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// hostNames lists the domains of every virtual host, for a 404 that names
// the hosts that do exist.
func (r *Resources) hostNames() []string {
	seen := map[string]bool{}
	for _, rc := range r.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			for _, d := range vh.GetDomains() {
				if !strings.HasSuffix(d, ":*") {
					seen[d] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// FromRender indexes what render produced for one group, with the errors
// of each HTTPProxy's status.
func FromRender(out *render.Output) *Resources {
	var msgs []proto.Message
	for _, url := range slices.Sorted(maps.Keys(out.Resources)) {
		msgs = append(msgs, out.Resources[url]...)
	}
	r := NewResources(msgs)
	r.AddStatuses(out.Statuses)
	return r
}

// AddStatuses records the errors of each HTTPProxy's status.
func (r *Resources) AddStatuses(sts []*dag.Status) {
	for _, st := range sts {
		if st.Key.Kind != objects.KindHTTPProxy {
			continue
		}
		key := st.Key.Namespace + "/" + st.Key.Name
		for _, e := range st.Errors {
			r.Problems[key] = append(r.Problems[key], e.Message)
		}
	}
}
