package translator

import (
	"testing"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// TestOwnersShareMetadata checks that the route configurations of one
// host made through one Owners hold one metadata message per owner, and
// are equal to those made without it.
func TestOwnersShareMetadata(t *testing.T) {
	root := types.NamespacedName{Namespace: "team", Name: "root"}
	child := types.NamespacedName{Namespace: "other", Name: "child"}
	routes := func(redirect bool) []*dag.Route {
		return []*dag.Route{
			forward(func(r *dag.Route) { r.Proxy, r.Index, r.HTTPSRedirect = root, 0, redirect }),
			forward(func(r *dag.Route) {
				r.PathMatch.Value, r.Proxy, r.Index, r.HTTPSRedirect = "/child", child, 1, redirect
			}),
			forward(func(r *dag.Route) { r.PathMatch.Value = "/anonymous" }),
		}
	}
	plain := &dag.VirtualHost{FQDN: "a.example.com", Proxy: root, Routes: routes(true)}
	secure := &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: "a.example.com", Proxy: root, Routes: routes(false)}}
	host := GRPCHost{FQDN: "a.example.com", Plain: plain, Secure: secure}

	var o Owners
	shared := []*envoy_config_route_v3.RouteConfiguration{o.HTTPRouteConfig(plain), o.HTTPSRouteConfig(secure), o.GRPCRouteConfig(host)}
	alone := []*envoy_config_route_v3.RouteConfiguration{HTTPRouteConfig(plain), HTTPSRouteConfig(secure), GRPCRouteConfig(host)}
	for i := range shared {
		if !proto.Equal(shared[i], alone[i]) {
			t.Errorf("%s through Owners:\n%v\nwithout:\n%v", alone[i].Name, shared[i], alone[i])
		}
	}
	first := shared[0].VirtualHosts[0]
	for _, rc := range shared[1:] {
		vh := rc.VirtualHosts[0]
		if vh.Metadata != first.Metadata {
			t.Errorf("%s: the virtual host's owner is a message of its own", rc.Name)
		}
		for j, rt := range vh.Routes {
			if rt.Metadata != first.Routes[j].Metadata {
				t.Errorf("%s: route %d's owner is a message of its own", rc.Name, j)
			}
		}
	}
	if first.Routes[0].Metadata == first.Routes[1].Metadata || first.Routes[2].Metadata != nil {
		t.Error("routes of different owners share their metadata")
	}
	if alone[0].VirtualHosts[0].Metadata == alone[1].VirtualHosts[0].Metadata {
		t.Error("route configurations made without Owners share their metadata")
	}
}
