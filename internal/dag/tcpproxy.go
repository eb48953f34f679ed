package dag

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// tcpProxy builds a root's tcpproxy, following one level of include.
func (rb *rootBuilder) tcpProxy(root *switchyardv1.HTTPProxy, st *Status) *TCPProxy {
	tp := root.Spec.TCPProxy
	if tp == nil {
		return nil
	}
	if root.Spec.VirtualHost.TLS == nil {
		st.addError(ErrTCPProxy, "TCPProxyWithoutTLS", "spec.tcpproxy: requires spec.virtualhost.tls (terminated or passthrough), SNI is what selects the host")
		return nil
	}
	owner, field := root, "spec.tcpproxy"
	if tp.Include != nil {
		var ok bool
		if owner, tp, ok = rb.tcpInclude(root, tp, st); !ok {
			return nil
		}
		st = rb.statusOf(owner)
	}
	out := rb.tcpServices(owner, tp, field, st)
	if out == nil || !tcpConnectionSettings(root.Spec.TCPProxy, out, rb.statusOf(root)) {
		return nil
	}
	return out
}

func (rb *rootBuilder) tcpInclude(root *switchyardv1.HTTPProxy, tp *switchyardv1.TCPProxy, st *Status) (*switchyardv1.HTTPProxy, *switchyardv1.TCPProxy, bool) {
	if len(tp.Services) > 0 {
		st.addError(ErrTCPProxy, "InvalidTCPProxy", "spec.tcpproxy: services and include are mutually exclusive")
		return nil, nil, false
	}
	ns := tp.Include.Namespace
	if ns == "" {
		ns = root.Namespace
	}
	target := types.NamespacedName{Namespace: ns, Name: tp.Include.Name}
	child := rb.lookupProxy(target)
	switch {
	case child == nil:
		st.addError(ErrTCPProxy, "IncludeNotFound", "spec.tcpproxy.include: HTTPProxy %s not found", target)
	case child.Spec.VirtualHost != nil:
		st.addError(ErrTCPProxy, "RootIncluded", "spec.tcpproxy.include: HTTPProxy %s has a virtualhost and cannot be included", target)
	case child.Spec.TCPProxy == nil || len(child.Spec.TCPProxy.Services) == 0:
		st.addError(ErrTCPProxy, "IncludeWithoutTCPProxy", "spec.tcpproxy.include: HTTPProxy %s has no tcpproxy with services", target)
	default:
		return child, child.Spec.TCPProxy, true
	}
	return nil, nil, false
}

func (rb *rootBuilder) tcpServices(owner *switchyardv1.HTTPProxy, tp *switchyardv1.TCPProxy, field string, st *Status) *TCPProxy {
	if len(tp.Services) == 0 {
		st.addError(ErrTCPProxy, "InvalidTCPProxy", "%s: one of services and include must be set", field)
		return nil
	}
	lb, err := loadBalancer(tp.LoadBalancerPolicy)
	if err == nil && (lb == LBCookie || lb == LBRequestHash) {
		err = fmt.Errorf("strategy %s needs HTTP requests to hash and cannot be used on a tcpproxy", lb)
	}
	if err != nil {
		st.addError(ErrTCPProxy, "InvalidLoadBalancerPolicy", "%s.loadBalancerPolicy: %v", field, err)
		return nil
	}
	common := clusterCommon{LoadBalancer: lb}
	if hc := tp.HealthCheckPolicy; hc != nil {
		if common.HealthCheck, err = healthCheckCommon(hc.IntervalSeconds, hc.TimeoutSeconds, hc.UnhealthyThresholdCount, hc.HealthyThresholdCount); err != nil {
			st.addError(ErrTCPProxy, "InvalidHealthCheckPolicy", "%s.healthCheckPolicy: %v", field, err)
			return nil
		}
	}
	for i, s := range tp.Services {
		if s.Protocol != nil && *s.Protocol != "tls" {
			st.addError(ErrTCPProxy, "InvalidProtocol", "%s.services[%d].protocol: only tls is meaningful on a tcpproxy", field, i)
			return nil
		}
	}
	cert, ok := rb.tcpClientCertificate(owner, tp, field, st)
	if !ok {
		return nil
	}
	common.ClientCertificate = cert
	fb := &forwardBuilder{rb: rb, ns: owner.Namespace, field: field, st: st, common: common}
	fwd, ok := fb.build(tp.Services)
	switch {
	case !ok || fwd == nil:
		return nil
	case fwd.Cluster == nil && fwd.Merged == nil:
		st.addError(ErrTCPProxy, "InvalidTCPProxy", "%s.services: an ExternalName Service must be the only service of a tcpproxy, which has no per-service clusters", field)
		return nil
	case fwd.Cluster == nil:
		st.addError(ErrTCPProxy, "InvalidTCPProxy", "%s.services: all services must use the same protocol and validation", field)
		return nil
	case len(fwd.Mirrors) > 0:
		st.addError(ErrTCPProxy, "InvalidTCPProxy", "%s.services: mirrors cannot be used on a tcpproxy", field)
		return nil
	case common.ClientCertificate != "" && fwd.Cluster.Spec.Protocol != "tls":
		st.addError(ErrTCPProxy, "ClientCertificateWithoutTLS", "%s.clientCertificate: requires the services to use protocol tls, they are reached in clear text", field)
		return nil
	}
	return &TCPProxy{Cluster: fwd.Cluster}
}

// healthCheckCommon applies the defaults Contour users expect and checks
// the ranges, whatever the source validated.
func healthCheckCommon(interval, timeout, unhealthy, healthy *int64) (*HealthCheck, error) {
	get := func(name string, p *int64, def, maxV int64) (int64, error) {
		if p == nil {
			return def, nil
		}
		if *p < 1 || *p > maxV {
			return 0, fmt.Errorf("%s: %d is not in 1-%d", name, *p, maxV)
		}
		return *p, nil
	}
	iv, err := get("intervalSeconds", interval, defaultHealthInterval, 86400)
	if err != nil {
		return nil, err
	}
	to, err := get("timeoutSeconds", timeout, defaultHealthTimeout, 86400)
	if err != nil {
		return nil, err
	}
	un, err := get("unhealthyThresholdCount", unhealthy, defaultUnhealthyCount, 1000)
	if err != nil {
		return nil, err
	}
	he, err := get("healthyThresholdCount", healthy, defaultHealthyCount, 1000)
	if err != nil {
		return nil, err
	}
	return &HealthCheck{
		Interval:           secondsDuration(iv),
		Timeout:            secondsDuration(to),
		UnhealthyThreshold: uint32(un),
		HealthyThreshold:   uint32(he),
	}, nil
}

// proxyDNS records the DNS names of every proxy of this tree: the proxy's
// route for "/" (else its first forwarding route) as <proxy>.<namespace>,
// and each named route as <route>.<proxy>.<namespace>.
func (rb *rootBuilder) proxyDNS(root *switchyardv1.HTTPProxy, routes []*Route, tcp *TCPProxy) {
	checked := rb.checkedServices(routes)
	byProxy := map[types.NamespacedName][]*Route{}
	for _, r := range routes {
		// A route behind ext_authz or another security policy (see
		// guarded) gets no DNS name: a DNS client would reach its backends
		// without the check. Nor does an unguarded route sharing a Service
		// with a guarded one: the name would lead to the same pods, and
		// every path they serve.
		if rb.guarded(r) || sharesService(r, checked) {
			continue
		}
		if r.Forward != nil && r.Forward.Merged != nil {
			byProxy[r.Proxy] = append(byProxy[r.Proxy], r)
		}
	}
	rootNN := types.NamespacedName{Namespace: root.Namespace, Name: root.Name}
	if tcp != nil && len(byProxy[rootNN]) == 0 {
		rb.dns = append(rb.dns, DNSName{Name: root.Name + "." + root.Namespace, Cluster: tcp.Cluster})
	}
	// Proxies in sorted order: when two names of this tree collide (a proxy
	// named "a.b" and route "a" of proxy "b"), the first one kept must not
	// depend on map order.
	proxies := make([]types.NamespacedName, 0, len(byProxy))
	for nn := range byProxy {
		proxies = append(proxies, nn)
	}
	slices.SortFunc(proxies, compareNN)
	for _, nn := range proxies {
		rs := byProxy[nn]
		if best := rb.defaultRoute(nn, rs); best != nil {
			rb.dns = append(rb.dns, DNSName{Name: nn.Name + "." + nn.Namespace, Cluster: best.Forward.Merged})
		}
		for _, r := range rs {
			if r.Name != "" {
				rb.dns = append(rb.dns, DNSName{Name: r.Name + "." + nn.Name + "." + nn.Namespace, Cluster: r.Forward.Merged})
			}
		}
	}
}

// defaultRoute picks a proxy's route for "/" as written in the proxy itself
// (before include prefixes), else its forwarding route with the lowest index.
func (rb *rootBuilder) defaultRoute(nn types.NamespacedName, rs []*Route) *Route {
	p := rb.snap.HTTPProxies[nn]
	var first *Route
	for _, r := range rs {
		if first == nil || r.Index < first.Index {
			first = r
		}
		if p != nil && r.Index < len(p.Spec.Routes) && isRootPath(p.Spec.Routes[r.Index].Conditions) {
			return r
		}
	}
	return first
}

func isRootPath(conds []switchyardv1.MatchCondition) bool {
	for _, c := range conds {
		if c.Prefix != "/" {
			return false
		}
	}
	return true
}

// checkedServices lists the Services behind guarded routes.
func (rb *rootBuilder) checkedServices(routes []*Route) map[types.NamespacedName]bool {
	out := map[types.NamespacedName]bool{}
	for _, r := range routes {
		if !rb.guarded(r) {
			continue
		}
		for _, b := range forwardBackends(r.Forward) {
			out[b.Service] = true
		}
	}
	return out
}

func sharesService(r *Route, services map[types.NamespacedName]bool) bool {
	for _, b := range forwardBackends(r.Forward) {
		if services[b.Service] {
			return true
		}
	}
	return false
}

// forwardBackends lists the backends a forward sends requests to: those of
// its merged cluster, or of its per-service clusters when it has none (a
// route mixing ExternalName and other Services).
func forwardBackends(f *Forward) []Backend {
	switch {
	case f == nil:
		return nil
	case f.Merged != nil:
		return f.Merged.Spec.Backends
	}
	var out []Backend
	for _, w := range f.Weighted {
		out = append(out, w.Cluster.Spec.Backends...)
	}
	return out
}
