package dag

import (
	"fmt"
	"net/netip"
	"strconv"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// maxIPFilterRules bounds one allow or deny list (the CRD's MaxItems,
// which a directory source does not apply).
const maxIPFilterRules = 64

// IPFilter is an allow or a deny list of source addresses, enforced by
// Envoy's RBAC filter (and by xDS-enabled gRPC servers in the grpc group).
type IPFilter struct {
	// Deny answers 403 to requests that match a rule; otherwise only
	// requests that match a rule are let through.
	Deny  bool
	Rules []IPRule
}

// IPRule matches one address range.
type IPRule struct {
	// Remote reads the client address derived from X-Forwarded-For;
	// otherwise the rule reads the connection's peer.
	Remote bool
	// Prefix is masked: its host bits are zero.
	Prefix netip.Prefix
}

// parseIPFilter reads the allow or deny list of a virtual host or route
// (field is "spec.virtualhost" or "spec.routes[i]"). It returns nil when
// neither list is set.
func parseIPFilter(p switchyardv1.IPFilterPolicies, field string) (*IPFilter, error) {
	allow, deny := p.IPAllowFilterPolicy, p.IPDenyFilterPolicy
	switch {
	case len(allow) > 0 && len(deny) > 0:
		return nil, fmt.Errorf("%s: at most one of ipAllowPolicy and ipDenyPolicy may be set", field)
	case len(allow) == 0 && len(deny) == 0:
		return nil, nil
	}
	f := &IPFilter{}
	list, name := allow, "ipAllowPolicy"
	if len(deny) > 0 {
		f.Deny, list, name = true, deny, "ipDenyPolicy"
	}
	if len(list) > maxIPFilterRules {
		return nil, fmt.Errorf("%s.%s: %d rules, more than the limit of %d", field, name, len(list), maxIPFilterRules)
	}
	for i, r := range list {
		rule, err := parseIPRule(r)
		if err != nil {
			return nil, fmt.Errorf("%s.%s[%s]: %v", field, name, strconv.Itoa(i), err)
		}
		f.Rules = append(f.Rules, rule)
	}
	return f, nil
}

func parseIPRule(r switchyardv1.IPFilterPolicy) (IPRule, error) {
	var rule IPRule
	switch r.Source {
	case switchyardv1.IPFilterSourcePeer:
	case switchyardv1.IPFilterSourceRemote:
		rule.Remote = true
	default:
		return rule, fmt.Errorf("source: %q is not Peer or Remote", r.Source)
	}
	prefix, err := parseCIDR(r.CIDR)
	if err != nil {
		return rule, fmt.Errorf("cidr: %v", err)
	}
	rule.Prefix = prefix
	return rule, nil
}

// parseCIDR reads a range or a single address. Zones ("fe80::1%eth0") are
// refused: Envoy's CIDR ranges have none.
func parseCIDR(s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, fmt.Errorf("must be set")
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is neither an IP address nor a CIDR range such as 10.0.0.0/8", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// hostIPFilter reads the virtual host's IP filter into rb.hostIP. A wrong
// list is an error and the host is not served: serving it without the
// filter would let through exactly the traffic the list was meant to stop.
func (rb *rootBuilder) hostIPFilter(root *switchyardv1.HTTPProxy, st *Status) bool {
	f, err := parseIPFilter(root.Spec.VirtualHost.IPFilterPolicies, "spec.virtualhost")
	if err != nil {
		st.addError(ErrVirtualHost, "InvalidIPFilter", "%v; the virtual host is not served until it is fixed", err)
		return false
	}
	if f != nil && root.Spec.TCPProxy != nil {
		st.addError(ErrVirtualHost, "IPFilterWithTCPProxy", "spec.virtualhost: ipAllowPolicy and ipDenyPolicy filter HTTP requests and cannot be used with spec.tcpproxy")
		return false
	}
	rb.hostPolicy.ipFilter = f
	return true
}

// routeIPFilter reads a route's IP filter; a wrong one makes the route
// answer invalidRouteStatus rather than forward unfiltered.
func (b *routeBuilder) routeIPFilter(r *switchyardv1.Route, out *Route) bool {
	f, err := parseIPFilter(r.IPFilterPolicies, b.field)
	if err != nil {
		b.st.addError(ErrRoute, "InvalidIPFilter", "%v", err)
		return false
	}
	out.IPFilter = f
	return true
}
