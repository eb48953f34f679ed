package explain

import (
	"fmt"
	"net"
	"path"
	"strings"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// hcm explains the request inside an HTTP connection manager: path
// normalisation, the route configuration (scoped, RDS or inline), then
// the virtual host and route.
func (w *walk) hcm(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager) {
	w.normalizePath(hcm)
	w.stripPort(hcm)
	rc, step := w.routeConfig(hcm)
	w.out.RouteConfig = step
	if rc == nil {
		return
	}
	w.http(rc, hcm.GetHttpFilters())
}

// routeConfig finds the route configuration, or decides a 404 when there
// is none for the request.
func (w *walk) routeConfig(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager) (*envoy_config_route_v3.RouteConfiguration, *RouteConfigStep) {
	switch rs := hcm.GetRouteSpecifier().(type) {
	case *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_RouteConfig:
		return rs.RouteConfig, &RouteConfigStep{Name: rs.RouteConfig.GetName(), Via: "inline", Why: "the connection manager holds its routes"}
	case *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_Rds:
		name := rs.Rds.GetRouteConfigName()
		step := &RouteConfigStep{Name: name, Via: "rds", Why: fmt.Sprintf("the connection manager names route configuration %q", name)}
		return w.lookupRoutes(name, step)
	case *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_ScopedRoutes:
		computed := w.setLuaScopeHeaders(hcm, rs.ScopedRoutes.GetScopeKeyBuilder())
		key, why := scopeKey(rs.ScopedRoutes.GetScopeKeyBuilder(), w.req)
		if len(computed) > 0 {
			why += "; the listener's host scope filter set " + strings.Join(computed, ", ") + " from :authority"
		}
		if key == nil {
			w.decide(Decision{Kind: KindNotFound, Status: 404, Reason: "no scope key: " + why, Fix: w.noHostFix(w.req.host)})
			return nil, nil
		}
		for _, s := range w.res.Scopes {
			if scopeMatches(s, key) {
				name := s.GetRouteConfigurationName()
				step := &RouteConfigStep{Name: name, Via: "scoped_routes",
					Why: fmt.Sprintf("scope %q has key %q (%s)", s.GetName(), strings.Join(key, ","), why)}
				return w.lookupRoutes(name, step)
			}
		}
		w.decide(Decision{Kind: KindNotFound, Status: 404,
			Reason: fmt.Sprintf("no scope has key %q (%s)", strings.Join(key, ","), why),
			Fix:    w.noHostFix(key[0])})
		return nil, nil
	}
	w.decide(Decision{Kind: KindNotFound, Status: 404, Reason: "the connection manager has no route configuration"})
	return nil, nil
}

func (w *walk) lookupRoutes(name string, step *RouteConfigStep) (*envoy_config_route_v3.RouteConfiguration, *RouteConfigStep) {
	rc := w.res.Routes[name]
	if rc == nil {
		w.decide(Decision{Kind: KindNotFound, Status: 404, Reason: fmt.Sprintf("route configuration %q is not served; Envoy answers 404 until it arrives", name)})
		return nil, step
	}
	return rc, step
}

// scopeKey builds the scope key Envoy computes from the request, or nil
// with the reason when a fragment cannot be computed.
func scopeKey(b *envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder, r *request) ([]string, string) {
	var key, whys []string
	for _, f := range b.GetFragments() {
		hx := f.GetHeaderValueExtractor()
		if hx == nil {
			return nil, "a scope key fragment is not a header value extractor"
		}
		v, ok := r.header(strings.ToLower(hx.GetName()))
		if !ok {
			return nil, fmt.Sprintf("header %s is absent", hx.GetName())
		}
		elems := []string{v}
		if sep := hx.GetElementSeparator(); sep != "" {
			elems = strings.Split(v, sep)
		}
		switch e := hx.GetExtractType().(type) {
		case *envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor_Index:
			if int(e.Index) >= len(elems) {
				return nil, fmt.Sprintf("header %s %q has no element %d", hx.GetName(), v, e.Index)
			}
			key = append(key, elems[e.Index])
			whys = append(whys, fmt.Sprintf("element %d of %s %q", e.Index, hx.GetName(), v))
		case *envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor_Element:
			found := false
			for _, el := range elems {
				k, val, _ := strings.Cut(el, e.Element.GetSeparator())
				if k == e.Element.GetKey() {
					key, found = append(key, val), true
					break
				}
			}
			if !found {
				return nil, fmt.Sprintf("header %s %q has no element %q", hx.GetName(), v, e.Element.GetKey())
			}
			whys = append(whys, fmt.Sprintf("element %q of %s", e.Element.GetKey(), hx.GetName()))
		default:
			// No extract_type is index 0: Envoy reads the index field's
			// zero value, the whole value when there is no separator.
			key = append(key, elems[0])
			whys = append(whys, fmt.Sprintf("%s %q", hx.GetName(), v))
		}
	}
	if len(key) == 0 {
		return nil, "the scope key builder has no fragments"
	}
	return key, strings.Join(whys, ", ")
}

func scopeMatches(s *envoy_config_route_v3.ScopedRouteConfiguration, key []string) bool {
	frags := s.GetKey().GetFragments()
	if len(frags) != len(key) {
		return false
	}
	for i, f := range frags {
		if f.GetStringKey() != key[i] {
			return false
		}
	}
	return true
}

// noHostFix says what to change when no virtual host answers a name.
// A name that differs from a served one only in case gets a specific
// answer: the plain-HTTP listener compares names case-sensitively.
func (w *walk) noHostFix(host string) string {
	for _, d := range w.res.hostNames() {
		if strings.EqualFold(d, host) && d != host {
			return fmt.Sprintf("send the host name in lowercase (%q): plain-HTTP requests select their host by an exact, case-sensitive comparison", d)
		}
	}
	names := w.res.hostNames()
	if len(names) > 8 {
		names = append(names[:8], "...")
	}
	return fmt.Sprintf("no root HTTPProxy has spec.virtualhost.fqdn %q (or it is not valid: see the statuses); hosts served: %s", host, strings.Join(names, ", "))
}

// normalizePath applies the connection manager's path normalisation,
// which happens before any route is matched.
func (w *walk) normalizePath(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager) {
	p, q, hasQuery := strings.Cut(w.req.Path, "?")
	orig := p
	if hcm.GetNormalizePath().GetValue() {
		p = strings.ReplaceAll(p, `\`, "/")
		clean := path.Clean(p)
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		p = clean
	}
	if hcm.GetMergeSlashes() {
		for strings.Contains(p, "//") {
			p = strings.ReplaceAll(p, "//", "/")
		}
	}
	if p == orig {
		return
	}
	w.note("the connection manager normalises the path %q to %q before matching", orig, p)
	if hasQuery {
		p += "?" + q
	}
	w.req.Path = p
	w.out.Request.Path = p
}

// stripPort applies strip_any_host_port and strip_matching_host_port.
func (w *walk) stripPort(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager) {
	host, port, err := net.SplitHostPort(w.req.Authority)
	if err != nil {
		return
	}
	listenerPort := fmt.Sprint(w.out.Listener.Port)
	if hcm.GetStripAnyHostPort() || (hcm.GetStripMatchingHostPort() && port == listenerPort) {
		w.req.Authority = host
		w.out.Request.Authority = host
	}
}
