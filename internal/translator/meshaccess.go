package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	envoy_filter_network_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/rbac/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
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
const filterNetworkRBAC = "envoy.filters.network.rbac"

// meshRBAC allows what the access's policies allow, one RBAC policy per
// TrafficTarget. An ALLOW RBAC without policies denies everyone, so a
// target whose sources run no pod (yet), or an invalid one, closes its
// destination. http says whether requests can be read: on a TCP
// listener a target whose rules allow only some requests allows nothing,
// as a connection carries no request to match.
func meshRBAC(a *dag.MeshAccess, http bool) *envoy_config_rbac_v3.RBAC {
	rules := &envoy_config_rbac_v3.RBAC{Action: envoy_config_rbac_v3.RBAC_ALLOW, Policies: map[string]*envoy_config_rbac_v3.Policy{}}
	for _, mp := range a.Policies {
		perms := meshPermissions(mp, http)
		if len(mp.Sources) == 0 || len(perms) == 0 {
			continue
		}
		p := &envoy_config_rbac_v3.Policy{Permissions: perms}
		for _, src := range mp.Sources {
			p.Principals = append(p.Principals, &envoy_config_rbac_v3.Principal{
				Identifier: &envoy_config_rbac_v3.Principal_DirectRemoteIp{DirectRemoteIp: &envoy_config_core_v3.CidrRange{
					AddressPrefix: src.Addr().String(),
					PrefixLen:     wrapperspb.UInt32(uint32(src.Bits())),
				}},
			})
		}
		rules.Policies[mp.Target.String()] = p
	}
	return rules
}

// meshPermissions are the requests a policy allows, any one of which
// suffices: every request, or the HTTPRouteGroup matches of its rules,
// each read as the split's matches are routed (the whole path by regex,
// the method, the headers by regex).
func meshPermissions(mp dag.MeshPolicy, http bool) []*envoy_config_rbac_v3.Permission {
	if mp.AnyRequest {
		return []*envoy_config_rbac_v3.Permission{{Rule: &envoy_config_rbac_v3.Permission_Any{Any: true}}}
	}
	if !http {
		return nil
	}
	out := make([]*envoy_config_rbac_v3.Permission, 0, len(mp.Requests))
	for _, r := range mp.Requests {
		var and []*envoy_config_rbac_v3.Permission
		if r.PathRegex != "" {
			and = append(and, &envoy_config_rbac_v3.Permission{Rule: &envoy_config_rbac_v3.Permission_UrlPath{UrlPath: &envoy_type_matcher_v3.PathMatcher{
				Rule: &envoy_type_matcher_v3.PathMatcher_Path{Path: &envoy_type_matcher_v3.StringMatcher{
					MatchPattern: &envoy_type_matcher_v3.StringMatcher_SafeRegex{SafeRegex: regex(r.PathRegex)},
				}},
			}}})
		}
		for _, h := range meshMatch(r).Headers {
			and = append(and, &envoy_config_rbac_v3.Permission{Rule: &envoy_config_rbac_v3.Permission_Header{Header: h}})
		}
		p := &envoy_config_rbac_v3.Permission{Rule: &envoy_config_rbac_v3.Permission_Any{Any: true}}
		if len(and) > 0 {
			p = &envoy_config_rbac_v3.Permission{Rule: &envoy_config_rbac_v3.Permission_AndRules{AndRules: &envoy_config_rbac_v3.Permission_Set{Rules: and}}}
		}
		out = append(out, p)
	}
	return out
}

// meshVirtualHostRBAC is the per-virtual-host RBAC of a Service with
// targets, nil for an open one.
func meshVirtualHostRBAC(a *dag.MeshAccess) map[string]*anypb.Any {
	if a == nil {
		return nil
	}
	return map[string]*anypb.Any{filterRBAC: toAny(&envoy_filter_http_rbac_v3.RBACPerRoute{
		Rbac: &envoy_filter_http_rbac_v3.RBAC{Rules: meshRBAC(a, true)},
	})}
}

// meshNetworkRBACFilter guards a TCP listener of a Service with targets.
func meshNetworkRBACFilter(statPrefix string, a *dag.MeshAccess) *envoy_config_listener_v3.Filter {
	return &envoy_config_listener_v3.Filter{
		Name: filterNetworkRBAC,
		ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(&envoy_filter_network_rbac_v3.RBAC{
			StatPrefix: statPrefix,
			Rules:      meshRBAC(a, false),
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
