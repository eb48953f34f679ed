package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	envoy_filter_http_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// ipFilterPolicyName names the one policy of an IP filter's RBAC rules. It
// shows up in Envoy's RBAC stats and in gRPC's denial logs.
const ipFilterPolicyName = "ip-rules"

// rbacFilter is the HCM's RBAC filter. It carries no rules, so it enforces
// nothing by itself: virtual hosts and routes switch it on with
// RBACPerRoute (see ipFilterConfig). Being in every HCM from the start, it
// never has to be added to the listener, which would drain its connections.
func rbacFilter() *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	return constFilter(filterRBAC, rbacConfigURL, "")
}

// rbacConfigURL is the type URL toAny gives the RBAC filter's config.
const rbacConfigURL = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC"

// ipFilterConfig is the typed_per_filter_config of a virtual host's or a
// route's IP filter. Envoy uses the most specific one, so a route's
// replaces its virtual host's, as the API promises.
func ipFilterConfig(f *dag.IPFilter) *anypb.Any {
	return toAny(&envoy_filter_http_rbac_v3.RBACPerRoute{
		Rbac: &envoy_filter_http_rbac_v3.RBAC{Rules: ipFilterRules(f)},
	})
}

// ipFilterRules is one policy that matches any request from any of the
// ranges: allowed with an allow list, denied with a deny list. Peer rules
// read direct_remote_ip, the connection's address; Remote rules read
// remote_ip, the address Envoy derived from X-Forwarded-For. gRPC reads
// both as the peer address, which is the only one it has.
func ipFilterRules(f *dag.IPFilter) *envoy_config_rbac_v3.RBAC {
	ids := make([]*envoy_config_rbac_v3.Principal, 0, len(f.Rules))
	for _, r := range f.Rules {
		cidr := &envoy_config_core_v3.CidrRange{
			AddressPrefix: r.Prefix.Addr().String(),
			PrefixLen:     u32(uint32(r.Prefix.Bits())),
		}
		p := &envoy_config_rbac_v3.Principal{Identifier: &envoy_config_rbac_v3.Principal_DirectRemoteIp{DirectRemoteIp: cidr}}
		if r.Remote {
			p.Identifier = &envoy_config_rbac_v3.Principal_RemoteIp{RemoteIp: cidr}
		}
		ids = append(ids, p)
	}
	action := envoy_config_rbac_v3.RBAC_ALLOW
	if f.Deny {
		action = envoy_config_rbac_v3.RBAC_DENY
	}
	return &envoy_config_rbac_v3.RBAC{
		Action: action,
		Policies: map[string]*envoy_config_rbac_v3.Policy{ipFilterPolicyName: {
			Permissions: []*envoy_config_rbac_v3.Permission{{Rule: &envoy_config_rbac_v3.Permission_Any{Any: true}}},
			Principals: []*envoy_config_rbac_v3.Principal{{
				Identifier: &envoy_config_rbac_v3.Principal_OrIds{OrIds: &envoy_config_rbac_v3.Principal_Set{Ids: ids}},
			}},
		}},
	}
}
