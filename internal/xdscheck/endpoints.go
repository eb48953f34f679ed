package xdscheck

import (
	"fmt"
	"net/netip"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
)

// endpointProblems checks what ValidateAll leaves to the client in a load
// assignment served over EDS: Envoy and gRPC both reject the whole
// assignment when one endpoint's address is not an IP literal (EDS
// addresses are never resolved) or its port is not 1-65535, and the
// protos only bound the port to 65535. Each error names the field and
// its value.
func endpointProblems(cla *envoy_config_endpoint_v3.ClusterLoadAssignment) []error {
	var errs []error
	for i, l := range cla.GetEndpoints() {
		for j, lb := range l.GetLbEndpoints() {
			errs = append(errs, addressProblems(i, j, -1, lb.GetEndpoint().GetAddress())...)
			for k, a := range lb.GetEndpoint().GetAdditionalAddresses() {
				errs = append(errs, addressProblems(i, j, k, a.GetAddress())...)
			}
		}
	}
	return errs
}

// addressProblems checks the address of endpoints[i].lb_endpoints[j]
// (its additional_addresses[k] unless k is -1). The field's name is
// written only when there is a problem: every endpoint of every load
// assignment served is checked here.
func addressProblems(i, j, k int, a *envoy_config_core_v3.Address) []error {
	sa := a.GetSocketAddress()
	if sa == nil {
		return nil
	}
	field := func() string {
		if k < 0 {
			return fmt.Sprintf("endpoints[%d].lb_endpoints[%d].endpoint.address", i, j)
		}
		return fmt.Sprintf("endpoints[%d].lb_endpoints[%d].endpoint.additional_addresses[%d].address", i, j, k)
	}
	var errs []error
	if _, err := netip.ParseAddr(sa.GetAddress()); err != nil && sa.GetResolverName() == "" {
		errs = append(errs, fmt.Errorf("%s.socket_address.address: %q is not an IP address", field(), sa.GetAddress()))
	}
	if p, ok := sa.GetPortSpecifier().(*envoy_config_core_v3.SocketAddress_PortValue); ok && (p.PortValue == 0 || p.PortValue > 65535) {
		errs = append(errs, fmt.Errorf("%s.socket_address.port_value: %d is not a port (1-65535)", field(), p.PortValue))
	}
	return errs
}
