package explain

import (
	"fmt"

	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// grpc explains the request as a proxyless gRPC client of the grpc group
// sees it: the dial target's authority names its API listener, whose
// connection manager names the route configuration; virtual host and
// route matching follow the same rules as Envoy's, and the client picks
// an endpoint itself.
func (w *walk) grpc() {
	name := w.req.Authority
	l := w.res.Listeners[name]
	if l == nil || l.GetApiListener() == nil {
		w.decide(Decision{Kind: KindRefused,
			Reason: fmt.Sprintf("no API listener is named %q: a gRPC channel to xds:///%s fails, its listener does not exist", name, name),
			Fix:    w.noHostFix(w.req.host)})
		return
	}
	w.out.Listener = &ListenerStep{Name: name, Why: fmt.Sprintf("the dial target xds:///%s names API listener %q", name, name)}
	hcm, ok := unpack(l.GetApiListener().GetApiListener()).(*envoy_filter_network_http_connection_manager_v3.HttpConnectionManager)
	if !ok {
		w.decide(Decision{Kind: KindRefused, Reason: "the API listener holds no HTTP connection manager"})
		return
	}
	rc, step := w.routeConfig(hcm)
	w.out.RouteConfig = step
	if rc == nil {
		return
	}
	w.http(rc, hcm.GetHttpFilters())
	switch w.out.Decision.Kind {
	case KindRedirect, KindDirect, KindForbidden, KindNotFound, KindUnavailable:
		if w.out.Decision.Status != 0 {
			w.note("gRPC fails an RPC that matches a redirect or direct_response route, or no route, with UNAVAILABLE; the HTTP status above is what Envoy would answer")
		}
	}
}
