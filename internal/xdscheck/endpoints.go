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
			field := fmt.Sprintf("endpoints[%d].lb_endpoints[%d].endpoint.address", i, j)
			errs = append(errs, addressProblems(field, lb.GetEndpoint().GetAddress())...)
			for k, a := range lb.GetEndpoint().GetAdditionalAddresses() {
				errs = append(errs, addressProblems(fmt.Sprintf("endpoints[%d].lb_endpoints[%d].endpoint.additional_addresses[%d].address", i, j, k), a.GetAddress())...)
			}
		}
	}
	return errs
}

func addressProblems(field string, a *envoy_config_core_v3.Address) []error {
	sa := a.GetSocketAddress()
	if sa == nil {
		return nil
	}
	var errs []error
	if _, err := netip.ParseAddr(sa.GetAddress()); err != nil && sa.GetResolverName() == "" {
		errs = append(errs, fmt.Errorf("%s.socket_address.address: %q is not an IP address", field, sa.GetAddress()))
	}
	if p, ok := sa.GetPortSpecifier().(*envoy_config_core_v3.SocketAddress_PortValue); ok && (p.PortValue == 0 || p.PortValue > 65535) {
		errs = append(errs, fmt.Errorf("%s.socket_address.port_value: %d is not a port (1-65535)", field, p.PortValue))
	}
	return errs
}
