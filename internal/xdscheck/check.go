package xdscheck

import (
	"cmp"
	"fmt"
	"sort"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_filter_network_tcp_proxy_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Check returns every problem of one consumer group's resources: what
// Validate finds in each, what go-control-plane's Snapshot.Consistent
// finds, and the references Consistent does not follow.
func Check(group xdsres.Group, r *translator.Resources) []error {
	var errs []error
	for _, m := range r.All() {
		errs = append(errs, Validate(m)...)
	}
	if err := Consistent(group, r); err != nil {
		errs = append(errs, err)
	}
	return append(errs, References(r)...)
}

// CheckServed is Check plus ClientRules on each resource: what no resource
// that reaches a client may fail, which the gate before the cache
// enforces.
func CheckServed(group xdsres.Group, r *translator.Resources) []error {
	errs := Check(group, r)
	for _, m := range r.All() {
		errs = append(errs, ClientRules(m)...)
	}
	return errs
}

// Consistent runs go-control-plane's consistency check: every EDS cluster
// has its load assignment and every route configuration a listener or scope
// names exists, with nothing left over. gRPC's api_listeners are invisible
// to it (it reads filter chains only), so for the grpc group listeners and
// routes are left out here and checked by References.
func Consistent(group xdsres.Group, r *translator.Resources) error {
	byType := map[resource.Type][]types.Resource{}
	for url, ms := range ByType(r) {
		if group == xdsres.GroupGRPC && (url == resource.ListenerType || url == resource.RouteType) {
			continue
		}
		for _, m := range ms {
			byType[url] = append(byType[url], m)
		}
	}
	snap, err := cache.NewSnapshot("check", byType)
	if err != nil {
		return fmt.Errorf("%s: building a go-control-plane snapshot: %w", group, err)
	}
	if err := snap.Consistent(); err != nil {
		return fmt.Errorf("%s: go-control-plane consistency: %w", group, err)
	}
	return nil
}

// References checks the names Consistent does not follow: the clusters
// routes, TCP proxies and gRPC services (ext_authz) send to, the secrets TLS
// contexts name, the route configurations api_listeners fetch, and that no
// two scopes share a key (Envoy rejects the whole SRDS update then) and no
// two resources of one type share a name.
func References(r *translator.Resources) []error {
	have := map[string]map[string]bool{"cluster": {}, "secret": {}, "route configuration": {}, "load assignment": {}}
	for _, c := range r.Clusters {
		have["cluster"][c.GetName()] = true
	}
	for _, e := range r.Endpoints {
		have["load assignment"][e.GetClusterName()] = true
	}
	for _, s := range r.Secrets {
		have["secret"][s.GetName()] = true
	}
	for _, rc := range r.Routes {
		have["route configuration"][rc.GetName()] = true
	}
	all := r.All()
	var errs []error
	errs = append(errs, uniqueNames(all)...)
	errs = append(errs, uniqueScopeKeys(r.ScopedRoutes)...)
	for _, m := range all {
		owner := fmt.Sprintf("%s %q", m.ProtoReflect().Descriptor().Name(), resourceName(m))
		visit(m, func(x proto.Message, _ bool) {
			for _, ref := range refsOf(x) {
				if ref.name == "" || !have[ref.kind][ref.name] {
					errs = append(errs, fmt.Errorf("%s refers to %s %q, which is not in the set", owner, ref.kind, ref.name))
				}
			}
		}, func(error) {}) // Validate reports Anys that do not unmarshal
	}
	return errs
}

type ref struct{ kind, name string }

// refsOf lists the names one message uses to refer to other resources.
func refsOf(m proto.Message) []ref {
	var out []ref
	switch x := m.(type) {
	case *envoy_config_route_v3.RouteAction:
		if c := x.GetCluster(); c != "" {
			out = append(out, ref{"cluster", c})
		}
		for _, wc := range x.GetWeightedClusters().GetClusters() {
			out = append(out, ref{"cluster", wc.GetName()})
		}
		for _, mp := range x.GetRequestMirrorPolicies() {
			out = append(out, ref{"cluster", mp.GetCluster()})
		}
	case *envoy_filter_network_tcp_proxy_v3.TcpProxy:
		if c := x.GetCluster(); c != "" {
			out = append(out, ref{"cluster", c})
		}
		for _, wc := range x.GetWeightedClusters().GetClusters() {
			out = append(out, ref{"cluster", wc.GetName()})
		}
	case *envoy_config_core_v3.GrpcService_EnvoyGrpc:
		out = append(out, ref{"cluster", x.GetClusterName()})
	case *envoy_transport_socket_tls_v3.SdsSecretConfig:
		out = append(out, ref{"secret", x.GetName()})
	case *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager:
		// An api_listener's HCM is reached too: visit unpacks Anys.
		if rds := x.GetRds(); rds != nil {
			out = append(out, ref{"route configuration", rds.GetRouteConfigName()})
		}
	case *envoy_config_route_v3.ScopedRouteConfiguration:
		out = append(out, ref{"route configuration", x.GetRouteConfigurationName()})
	case *envoy_config_cluster_v3.Cluster:
		if x.GetType() == envoy_config_cluster_v3.Cluster_EDS {
			out = append(out, ref{"load assignment", cmp.Or(x.GetEdsClusterConfig().GetServiceName(), x.GetName())})
		}
	}
	return out
}

// refTypes are the type URLs of the kinds of resource refsOf finds.
var refTypes = map[string]string{
	"cluster":             resource.ClusterType,
	"secret":              resource.SecretType,
	"route configuration": resource.RouteType,
	"load assignment":     resource.EndpointType,
}

// Ref is a reference from one resource to another, which a client
// resolves by type and name.
type Ref struct {
	Type, Name string
}

// Refs lists the resources m refers to, nested typed_configs included:
// the clusters of routes, TCP proxies and gRPC services, the secrets of
// TLS contexts, the route configurations of HTTP connection managers and
// scopes, the load assignment of an EDS cluster.
func Refs(m proto.Message) []Ref {
	var out []Ref
	visit(m, func(x proto.Message, _ bool) {
		for _, r := range refsOf(x) {
			out = append(out, Ref{Type: refTypes[r.kind], Name: r.name})
		}
	}, func(error) {})
	return out
}

// ByType groups a translation's resources by type URL, leaving out empty
// types.
func ByType(r *translator.Resources) map[string][]proto.Message {
	out := map[string][]proto.Message{}
	for _, m := range r.All() {
		url := "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName())
		out[url] = append(out[url], m)
	}
	return out
}

func resourceName(m proto.Message) string {
	if c, ok := m.(interface{ GetClusterName() string }); ok {
		return c.GetClusterName()
	}
	if n, ok := m.(interface{ GetName() string }); ok {
		return n.GetName()
	}
	return ""
}

func uniqueNames(ms []proto.Message) []error {
	seen := map[string]bool{}
	var errs []error
	for _, m := range ms {
		key := string(m.ProtoReflect().Descriptor().FullName()) + " " + resourceName(m)
		if seen[key] {
			errs = append(errs, fmt.Errorf("two resources are named %s", key))
		}
		seen[key] = true
	}
	return errs
}

func uniqueScopeKeys(scopes []*envoy_config_route_v3.ScopedRouteConfiguration) []error {
	seen := map[string]string{}
	var errs []error
	for _, s := range scopes {
		key := fmt.Sprint(s.GetKey().GetFragments())
		if prev, dup := seen[key]; dup {
			errs = append(errs, fmt.Errorf("scopes %q and %q share the key %s", prev, s.GetName(), key))
		}
		seen[key] = s.GetName()
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errs
}

// Collect sorts decoded resources into a translator.Resources, the shape
// Check takes, for resources read back from a cache or a client. It
// reports the messages of a type no group serves.
func Collect(ms []proto.Message) (*translator.Resources, error) {
	out := &translator.Resources{}
	for _, m := range ms {
		switch x := m.(type) {
		case *envoy_config_listener_v3.Listener:
			out.Listeners = append(out.Listeners, x)
		case *envoy_config_route_v3.ScopedRouteConfiguration:
			out.ScopedRoutes = append(out.ScopedRoutes, x)
		case *envoy_config_route_v3.RouteConfiguration:
			out.Routes = append(out.Routes, x)
		case *envoy_config_cluster_v3.Cluster:
			out.Clusters = append(out.Clusters, x)
		case *envoy_config_endpoint_v3.ClusterLoadAssignment:
			out.Endpoints = append(out.Endpoints, x)
		case *envoy_transport_socket_tls_v3.Secret:
			out.Secrets = append(out.Secrets, x)
		default:
			return nil, fmt.Errorf("%T is no resource of a consumer group", m)
		}
	}
	return out, nil
}
