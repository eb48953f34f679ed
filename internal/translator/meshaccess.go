package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	envoy_filter_network_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/rbac/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// The node proxy enforces TrafficTargets with Envoy's RBAC filters, and
// the xDS-enabled gRPC backends of mesh Services with gRPC's (the same
// rules, see MeshGRPCServerListeners): the caller is the connection's peer
// address (direct_remote_ip), the pod IP of a workload that reached its
// node's proxy, or the backend itself, directly. On HTTP ports the
// HCM's own RBAC filter (policyFilters), which enforces nothing itself,
// carries them: each virtual host whose Service has targets brings its
// own rules (meshVirtualHostRBAC), so that an open Service on the same
// port stays open.
const (
	filterNetworkRBAC = "envoy.filters.network.rbac"
	// meshPolicyName names the one policy: the TrafficTargets' sources.
	meshPolicyName = "traffic-targets"
)

// meshRBAC allows exactly the access's sources. Without sources there is
// no policy, and an ALLOW RBAC without policies denies everyone: a target
// whose sources run no pod (yet) closes its destination.
func meshRBAC(a *dag.MeshAccess) *envoy_config_rbac_v3.RBAC {
	rules := &envoy_config_rbac_v3.RBAC{Action: envoy_config_rbac_v3.RBAC_ALLOW, Policies: map[string]*envoy_config_rbac_v3.Policy{}}
	if len(a.Sources) == 0 {
		return rules
	}
	p := &envoy_config_rbac_v3.Policy{
		Permissions: []*envoy_config_rbac_v3.Permission{{Rule: &envoy_config_rbac_v3.Permission_Any{Any: true}}},
	}
	for _, src := range a.Sources {
		p.Principals = append(p.Principals, &envoy_config_rbac_v3.Principal{
			Identifier: &envoy_config_rbac_v3.Principal_DirectRemoteIp{DirectRemoteIp: &envoy_config_core_v3.CidrRange{
				AddressPrefix: src.Addr().String(),
				PrefixLen:     wrapperspb.UInt32(uint32(src.Bits())),
			}},
		})
	}
	rules.Policies[meshPolicyName] = p
	return rules
}

// meshVirtualHostRBAC is the per-virtual-host RBAC of a Service with
// targets, nil for an open one.
func meshVirtualHostRBAC(a *dag.MeshAccess) map[string]*anypb.Any {
	if a == nil {
		return nil
	}
	return map[string]*anypb.Any{filterRBAC: toAny(&envoy_filter_http_rbac_v3.RBACPerRoute{
		Rbac: &envoy_filter_http_rbac_v3.RBAC{Rules: meshRBAC(a)},
	})}
}

// meshNetworkRBACFilter guards a TCP listener of a Service with targets.
func meshNetworkRBACFilter(statPrefix string, a *dag.MeshAccess) *envoy_config_listener_v3.Filter {
	return &envoy_config_listener_v3.Filter{
		Name: filterNetworkRBAC,
		ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(&envoy_filter_network_rbac_v3.RBAC{
			StatPrefix: statPrefix,
			Rules:      meshRBAC(a),
		})},
	}
}

// MeshGRPCServerListeners are the server listeners of a mesh Service, for
// its xDS-enabled gRPC backends (gRFC A36): a proxyless client picks a
// backend itself and reaches it directly, so no proxy is in between to
// judge the caller, and the backend enforces the TrafficTargets with
// gRPC's RBAC filter (gRFC A41), configured as the node proxy's virtual
// host is. A Service no target names gets them too, open, so that a
// target added or removed later never takes a backend out of service.
func MeshGRPCServerListeners(ms *dag.MeshService) []*envoy_config_listener_v3.Listener {
	vh := &envoy_config_route_v3.VirtualHost{
		Name:    ms.Name,
		Domains: []string{"*"},
		Routes: []*envoy_config_route_v3.Route{{
			Match:  &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}},
			Action: &envoy_config_route_v3.Route_NonForwardingAction{NonForwardingAction: &envoy_config_route_v3.NonForwardingAction{}},
		}},
		TypedPerFilterConfig: meshVirtualHostRBAC(ms.Access),
	}
	return grpcServerListeners(ms.Name, GRPCServerListenerPrefix+ms.Name, vh)
}
