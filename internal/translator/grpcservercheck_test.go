package translator

import (
	"fmt"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

const rbacTypeURL = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC"

// grpcServerListenerProblems checks a server listener the way grpc-go's
// xDS server reads one (unmarshal_lds.go, filter_chain.go, routing.go):
// an address, filter chains of exactly one HCM each with an inline route
// configuration whose routes all carry the non-forwarding action, and the
// RBAC filter before the router, which is last.
func grpcServerListenerProblems(l *envoy_config_listener_v3.Listener) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("server listener %s: "+format, append([]any{l.GetName()}, args...)...))
	}
	if l.GetAddress().GetSocketAddress().GetAddress() == "" {
		fail("no socket address")
	}
	if len(l.GetFilterChains()) == 0 {
		fail("no filter chains")
	}
	for i, fc := range l.GetFilterChains() {
		if len(fc.GetFilters()) != 1 {
			fail("filter chain %d has %d filters, want the HCM alone", i, len(fc.GetFilters()))
			continue
		}
		hcm := &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{}
		if err := fc.GetFilters()[0].GetTypedConfig().UnmarshalTo(hcm); err != nil {
			fail("filter chain %d: not an HttpConnectionManager: %v", i, err)
			continue
		}
		filters := hcm.GetHttpFilters()
		for j, f := range filters {
			url := f.GetTypedConfig().GetTypeUrl()
			switch {
			case j == len(filters)-1 && url != routerTypeURL:
				fail("filter chain %d: the last http filter is %s, not the router", i, url)
			case j < len(filters)-1 && url != rbacTypeURL:
				fail("filter chain %d: http filter %s is not one Switchyard configures on servers", i, url)
			}
		}
		rc := hcm.GetRouteConfig()
		if rc == nil {
			fail("filter chain %d: no inline route configuration", i)
			continue
		}
		for _, vh := range rc.GetVirtualHosts() {
			for _, rt := range vh.GetRoutes() {
				if rt.GetNonForwardingAction() == nil {
					fail("route %q of %s: not a non_forwarding_action, which fails every RPC it matches", rt.GetName(), vh.GetName())
				}
			}
		}
	}
	return errs
}
