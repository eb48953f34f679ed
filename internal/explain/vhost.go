package explain

import (
	"fmt"
	"net"
	"strings"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// http explains a request from its route configuration on: virtual host,
// routes, filters, action.
func (w *walk) http(rc *envoy_config_route_v3.RouteConfiguration, filters []*envoy_filter_network_http_connection_manager_v3.HttpFilter) {
	authority := w.req.Authority
	if rc.GetIgnorePortInHostMatching() {
		if h, _, err := net.SplitHostPort(authority); err == nil {
			authority = h
		}
	}
	vh, domain, why := FindVirtualHost(rc.GetVirtualHosts(), authority)
	if vh == nil {
		w.decide(Decision{Kind: KindNotFound, Status: 404,
			Reason: fmt.Sprintf("no virtual host of route configuration %q has a domain matching %q", rc.GetName(), authority),
			Fix:    w.noHostFix(w.req.host)})
		return
	}
	vstep := &VirtualHostStep{Name: vh.GetName(), Domain: domain, Why: why, Owner: w.owner(vh.GetMetadata())}
	w.out.VirtualHost = vstep
	rt := w.matchRoutes(vh)
	w.policies(filters, rc, vh, rt)
	if w.out.Decision.Kind != "" {
		return
	}
	if rt == nil {
		d := Decision{Kind: KindNotFound, Status: 404,
			Reason: fmt.Sprintf("none of the %d routes of virtual host %q matches", len(vh.GetRoutes()), vh.GetName()), Owner: vstep.Owner}
		if vstep.Owner != nil {
			d.Fix = fmt.Sprintf("add a route matching %s to %s (or to an HTTPProxy it includes)", w.req.Path, vstep.Owner)
		}
		w.decide(d)
		return
	}
	w.action(rt)
}

// FindVirtualHost picks the virtual host for an authority by Envoy's
// rules: the authority is lowercased; an exact domain wins, then the
// longest suffix wildcard ("*.example.com", "*-web.example.com"), then
// the longest prefix wildcard ("example.*", "example.com:*"), then "*".
// A wildcard never matches an empty string. It returns the domain that
// matched and why.
func FindVirtualHost(vhs []*envoy_config_route_v3.VirtualHost, authority string) (*envoy_config_route_v3.VirtualHost, string, string) {
	host := strings.ToLower(authority)
	type hit struct {
		vh     *envoy_config_route_v3.VirtualHost
		domain string
		n      int
	}
	var suffix, prefix, any *hit
	for _, vh := range vhs {
		for _, d := range vh.GetDomains() {
			ld := strings.ToLower(d)
			switch {
			case ld == "*":
				if any == nil {
					any = &hit{vh, d, 0}
				}
			case strings.HasPrefix(ld, "*"):
				s := ld[1:]
				if len(host) > len(s) && strings.HasSuffix(host, s) && (suffix == nil || len(s) > suffix.n) {
					suffix = &hit{vh, d, len(s)}
				}
			case strings.HasSuffix(ld, "*"):
				p := ld[:len(ld)-1]
				if len(host) > len(p) && strings.HasPrefix(host, p) && (prefix == nil || len(p) > prefix.n) {
					prefix = &hit{vh, d, len(p)}
				}
			case ld == host:
				return vh, d, fmt.Sprintf("domain %q equals the authority %q (compared in lowercase)", d, authority)
			}
		}
	}
	switch {
	case suffix != nil:
		return suffix.vh, suffix.domain, fmt.Sprintf("suffix wildcard %q is the longest that matches %q (no exact domain does)", suffix.domain, authority)
	case prefix != nil:
		return prefix.vh, prefix.domain, fmt.Sprintf("prefix wildcard %q is the longest that matches %q (no exact or suffix domain does)", prefix.domain, authority)
	case any != nil:
		return any.vh, any.domain, fmt.Sprintf("the catch-all domain \"*\" (no other domain matches %q)", authority)
	}
	return nil, "", ""
}
