package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// Keys of the metadata Switchyard puts on virtual hosts and routes. Envoy
// and gRPC ignore them; they are there so that whoever reads the served
// resources (switchyard explain, an operator with Envoy's config dump) can
// tell which HTTPProxy, and which of its routes, to fix.
const (
	// MetadataNamespace is the filter_metadata key holding the fields below.
	MetadataNamespace = "switchyard.dev"
	// MetadataHTTPProxy is the "namespace/name" of the HTTPProxy: the root
	// proxy on a virtual host, the proxy defining the route on a route.
	MetadataHTTPProxy = "httpproxy"
	// MetadataRouteIndex is the route's position in that proxy's
	// spec.routes.
	MetadataRouteIndex = "routeIndex"
)

// routeMetadata names the HTTPProxy and spec.routes entry a route came
// from: Envoy routes are sorted and merged across included proxies, so
// their position says nothing about where they were written.
func routeMetadata(r *dag.Route) *envoy_config_core_v3.Metadata {
	if r.Proxy.Name == "" {
		return nil
	}
	md := ownerMetadata(r.Proxy)
	md.FilterMetadata[MetadataNamespace].Fields[MetadataRouteIndex] = structpb.NewNumberValue(float64(r.Index))
	return md
}

// ownedBy records the root HTTPProxy of the one virtual host of rc.
func ownedBy(rc *envoy_config_route_v3.RouteConfiguration, proxy types.NamespacedName) *envoy_config_route_v3.RouteConfiguration {
	if proxy.Name != "" {
		rc.VirtualHosts[0].Metadata = ownerMetadata(proxy)
	}
	return rc
}

func ownerMetadata(proxy types.NamespacedName) *envoy_config_core_v3.Metadata {
	return &envoy_config_core_v3.Metadata{FilterMetadata: map[string]*structpb.Struct{
		MetadataNamespace: {Fields: map[string]*structpb.Value{MetadataHTTPProxy: structpb.NewStringValue(proxy.String())}},
	}}
}

// MetadataOwner reads what routeMetadata and ownedBy record: the
// HTTPProxy, and on a route its spec.routes index (-1 when there is none).
// proxy is "" when the metadata names none.
func MetadataOwner(md *envoy_config_core_v3.Metadata) (proxy string, index int) {
	fields := md.GetFilterMetadata()[MetadataNamespace].GetFields()
	proxy = fields[MetadataHTTPProxy].GetStringValue()
	index = -1
	if v, ok := fields[MetadataRouteIndex]; ok {
		index = int(v.GetNumberValue())
	}
	return proxy, index
}
