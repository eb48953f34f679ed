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

// Owners hands out the owner metadata of routes and virtual hosts (see
// routeMetadata), one message for each HTTPProxy and route index: the
// route configurations of one host (plain, secure and gRPC) name the same
// owners, and each name costs a block of six allocations, most of them
// the two maps a Metadata holds. The messages are shared by every route
// configuration made through the same Owners, so nothing may change them.
// A nil *Owners shares nothing; the zero Owners is ready to use. It is not
// safe for concurrent use.
type Owners struct {
	byOwner map[ownerKey]*envoy_config_core_v3.Metadata
}

// ownerKey is an owner's HTTPProxy and route index, -1 for a virtual host.
type ownerKey struct {
	proxy types.NamespacedName
	index int
}

// routeMetadata names the HTTPProxy and spec.routes entry a route came
// from: Envoy routes are sorted and merged across included proxies, so
// their position says nothing about where they were written.
func (o *Owners) routeMetadata(r *dag.Route) *envoy_config_core_v3.Metadata {
	if r.Proxy.Name == "" {
		return nil
	}
	return o.metadata(ownerKey{r.Proxy, r.Index})
}

// ownedBy records the root HTTPProxy of the one virtual host of rc.
func (o *Owners) ownedBy(rc *envoy_config_route_v3.RouteConfiguration, proxy types.NamespacedName) *envoy_config_route_v3.RouteConfiguration {
	if proxy.Name != "" {
		rc.VirtualHosts[0].Metadata = o.metadata(ownerKey{proxy, -1})
	}
	return rc
}

func (o *Owners) metadata(k ownerKey) *envoy_config_core_v3.Metadata {
	if o == nil {
		return newOwnerMetadata(k)
	}
	if md, ok := o.byOwner[k]; ok {
		return md
	}
	if o.byOwner == nil {
		o.byOwner = map[ownerKey]*envoy_config_core_v3.Metadata{}
	}
	md := newOwnerMetadata(k)
	o.byOwner[k] = md
	return md
}

// newOwnerMetadata names the HTTPProxy of k and, unless k.index is -1,
// its spec.routes index.
func newOwnerMetadata(k ownerKey) *envoy_config_core_v3.Metadata {
	if k.index < 0 {
		return &newOwnerBlock(k.proxy, 1).md
	}
	b := newOwnerBlock(k.proxy, 2)
	b.index.Kind, b.indexKind.NumberValue = &b.indexKind, float64(k.index)
	b.st.Fields[MetadataRouteIndex] = &b.index
	return &b.md
}

// ownerBlock holds the messages of a route's or virtual host's metadata,
// so that they take one allocation instead of six: every route has them.
type ownerBlock struct {
	md        envoy_config_core_v3.Metadata
	st        structpb.Struct
	proxy     structpb.Value
	proxyKind structpb.Value_StringValue
	index     structpb.Value
	indexKind structpb.Value_NumberValue
}

func newOwnerBlock(proxy types.NamespacedName, fields int) *ownerBlock {
	b := &ownerBlock{}
	b.proxyKind.StringValue = proxy.Namespace + "/" + proxy.Name
	b.proxy.Kind = &b.proxyKind
	b.st.Fields = make(map[string]*structpb.Value, fields)
	b.st.Fields[MetadataHTTPProxy] = &b.proxy
	b.md.FilterMetadata = map[string]*structpb.Struct{MetadataNamespace: &b.st}
	return b
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
