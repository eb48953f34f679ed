package explain

import (
	"fmt"
	"strings"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_filter_network_connection_limit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/connection_limit/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_filter_network_tcp_proxy_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// envoy explains the request as an Envoy proxy of the envoy group sees it.
func (w *walk) envoy() {
	l, why := w.pickListener()
	if l == nil {
		w.decide(Decision{Kind: KindRefused, Reason: why, Fix: w.tlsFix()})
		return
	}
	step := &ListenerStep{Name: l.GetName(), Port: l.GetAddress().GetSocketAddress().GetPortValue(), Why: why}
	w.out.Listener = step
	if tls := w.req.Scheme == "https"; terminatesTLS(l) != tls {
		w.decide(Decision{Kind: KindRefused, Reason: fmt.Sprintf("listener %s on port %d does not speak %s: the connection fails before any HTTP", l.GetName(), step.Port, w.req.Scheme),
			Fix: "use the scheme that port serves, or the other listener's port"})
		return
	}
	fc, why := w.pickFilterChain(l)
	if fc == nil {
		w.decide(Decision{Kind: KindRefused, Reason: why, Fix: w.tlsFix()})
		return
	}
	step.FilterChain = fc.GetName()
	step.Why += "; " + why
	if len(fc.GetFilters()) == 0 {
		w.decide(Decision{Kind: KindRefused, Reason: "the filter chain has no network filters"})
		return
	}
	// The last filter is the terminal one that decides where the
	// connection goes; those before it (a connection_limit) only gate it.
	filters := fc.GetFilters()
	for _, f := range filters[:len(filters)-1] {
		if cl, ok := unpack(f.GetTypedConfig()).(*envoy_filter_network_connection_limit_v3.ConnectionLimit); ok {
			step.Why += fmt.Sprintf("; at most %d connections at once (connection_limit), further ones are closed", cl.GetMaxConnections().GetValue())
		}
	}
	f := filters[len(filters)-1]
	switch cfg := unpack(f.GetTypedConfig()).(type) {
	case *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager:
		w.hcm(cfg)
	case *envoy_filter_network_tcp_proxy_v3.TcpProxy:
		w.tcpProxy(cfg)
	default:
		w.decide(Decision{Kind: KindRefused, Reason: fmt.Sprintf("the filter chain's terminal network filter is %s, which explain does not know", f.GetName())})
	}
}

// unpack returns the message in a typed_config, nil when its type is not
// linked into this binary.
func unpack(a *anypb.Any) proto.Message {
	if a == nil {
		return nil
	}
	m, err := a.UnmarshalNew()
	if err != nil {
		return nil
	}
	return m
}

// pickListener returns the listener the connection reaches: the one on
// the URL's port when there is one, else the one for the URL's scheme (an
// ingress usually sits behind a Service whose port is not Envoy's).
func (w *walk) pickListener() (*envoy_config_listener_v3.Listener, string) {
	tls := w.req.Scheme == "https"
	var byScheme *envoy_config_listener_v3.Listener
	for _, name := range w.res.listenerNames() {
		l := w.res.Listeners[name]
		if l.GetApiListener() != nil {
			continue
		}
		if w.req.Port != 0 && l.GetAddress().GetSocketAddress().GetPortValue() == w.req.Port {
			return l, fmt.Sprintf("listener %s binds port %d", name, w.req.Port)
		}
		if byScheme == nil && terminatesTLS(l) == tls {
			byScheme = l
		}
	}
	if byScheme == nil {
		if tls {
			return nil, "no listener accepts TLS: no secure virtual host can be served, so Envoy has no HTTPS listener and the connection is refused"
		}
		return nil, "no plain-HTTP listener"
	}
	return byScheme, fmt.Sprintf("listener %s serves %s", byScheme.GetName(), w.req.Scheme)
}

// terminatesTLS reports whether a listener is the TLS one: it inspects
// ClientHellos or one of its chains matches on SNI or terminates TLS.
func terminatesTLS(l *envoy_config_listener_v3.Listener) bool {
	for _, lf := range l.GetListenerFilters() {
		if strings.Contains(lf.GetName(), "tls_inspector") {
			return true
		}
	}
	for _, fc := range l.GetFilterChains() {
		if fc.GetTransportSocket() != nil || len(fc.GetFilterChainMatch().GetServerNames()) > 0 {
			return true
		}
	}
	return false
}

// pickFilterChain applies Envoy's filter chain match to what explain
// knows of the connection: SNI (exact name first, then the longest
// wildcard "*.suffix", then chains without server_names) and the
// transport protocol. Chains that also match on addresses or ALPN are
// taken to match, with a note.
func (w *walk) pickFilterChain(l *envoy_config_listener_v3.Listener) (*envoy_config_listener_v3.FilterChain, string) {
	sni := ""
	transport := "raw_buffer"
	if w.req.Scheme == "https" {
		sni, transport = w.req.SNI, "tls"
	}
	var best *envoy_config_listener_v3.FilterChain
	bestRank, bestWhy := -1, ""
	for _, fc := range l.GetFilterChains() {
		m := fc.GetFilterChainMatch()
		if tp := m.GetTransportProtocol(); tp != "" && tp != transport {
			continue
		}
		rank, why := serverNameRank(m.GetServerNames(), sni)
		if rank < 0 {
			continue
		}
		if len(m.GetPrefixRanges()) > 0 || len(m.GetSourcePrefixRanges()) > 0 || len(m.GetApplicationProtocols()) > 0 || m.GetDestinationPort() != nil {
			w.note("filter chain %s also matches on addresses, ports or ALPN, which explain does not check", fc.GetName())
		}
		if rank > bestRank {
			best, bestRank, bestWhy = fc, rank, why
		}
	}
	if best != nil {
		return best, bestWhy
	}
	if d := l.GetDefaultFilterChain(); d != nil {
		return d, "the default filter chain"
	}
	if sni != "" {
		return nil, fmt.Sprintf("no filter chain of %s matches SNI %q: Envoy closes the connection during the TLS handshake", l.GetName(), sni)
	}
	return nil, fmt.Sprintf("no filter chain of %s matches the connection", l.GetName())
}

// serverNameRank says how well a chain's server_names match the SNI: -1
// not at all, 0 a chain without server_names, len(suffix) for a wildcard,
// and above any wildcard for the exact name. Envoy compares names without
// regard to case.
func serverNameRank(names []string, sni string) (int, string) {
	if len(names) == 0 {
		return 0, "the filter chain matches any server name"
	}
	best, why := -1, ""
	for _, n := range names {
		n = strings.ToLower(n)
		switch {
		case n == sni && sni != "":
			return 1 << 20, fmt.Sprintf("filter chain matches SNI %q", sni)
		case strings.HasPrefix(n, "*.") && strings.HasSuffix(sni, n[1:]) && len(sni) > len(n)-1:
			if len(n) > best {
				best, why = len(n), fmt.Sprintf("filter chain server name %q matches SNI %q", n, sni)
			}
		}
	}
	return best, why
}

// tlsFix points at the root HTTPProxy of the host when a TLS connection
// finds no filter chain: such a host has no (valid) certificate.
func (w *walk) tlsFix() string {
	if w.req.Scheme != "https" {
		return ""
	}
	for _, rc := range w.res.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			if vh.GetName() != w.req.SNI {
				continue
			}
			if o := w.owner(vh.GetMetadata()); o != nil {
				return fmt.Sprintf("%s: spec.virtualhost.tls is missing or its secret is not valid (see its status); only plain HTTP is served for %s", o, w.req.SNI)
			}
		}
	}
	return fmt.Sprintf("no valid root HTTPProxy serves %q over TLS: one needs spec.virtualhost.fqdn %q and spec.virtualhost.tls with a valid (and, across namespaces, delegated) secret; see the statuses", w.req.SNI, w.req.SNI)
}

// tcpProxy explains a filter chain that forwards the TCP stream.
func (w *walk) tcpProxy(cfg *envoy_filter_network_tcp_proxy_v3.TcpProxy) {
	var targets []weighted
	switch c := cfg.GetClusterSpecifier().(type) {
	case *envoy_filter_network_tcp_proxy_v3.TcpProxy_Cluster:
		targets = []weighted{{name: c.Cluster, weight: 1}}
	case *envoy_filter_network_tcp_proxy_v3.TcpProxy_WeightedClusters:
		for _, wc := range c.WeightedClusters.GetClusters() {
			targets = append(targets, weighted{name: wc.GetName(), weight: uint64(wc.GetWeight())})
		}
	}
	w.forward(targets, nil, "the TCP stream is forwarded (tcp_proxy)")
}
