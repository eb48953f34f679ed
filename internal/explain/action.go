package explain

import (
	"fmt"
	"net"
	"strings"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// action explains what the matched route does.
func (w *walk) action(rt *envoy_config_route_v3.Route) {
	owner := w.owner(rt.GetMetadata())
	switch a := rt.GetAction().(type) {
	case *envoy_config_route_v3.Route_DirectResponse:
		w.directResponse(a.DirectResponse, owner)
	case *envoy_config_route_v3.Route_Redirect:
		loc, code := w.redirect(rt.GetMatch(), a.Redirect)
		w.decide(Decision{Kind: KindRedirect, Status: code, Location: loc, Owner: owner,
			Reason: fmt.Sprintf("the route redirects (%d) to %s", code, loc)})
	case *envoy_config_route_v3.Route_Route:
		w.routeAction(a.Route, owner)
	default:
		w.decide(Decision{Kind: KindNotFound, Status: 404, Owner: owner,
			Reason: fmt.Sprintf("the route's action (%T) is not one explain evaluates", a)})
	}
}

func (w *walk) directResponse(dr *envoy_config_route_v3.DirectResponseAction, owner *Owner) {
	status := int(dr.GetStatus())
	body := dr.GetBody().GetInlineString()
	d := Decision{Kind: KindDirect, Status: status, Owner: owner, Reason: fmt.Sprintf("the route answers %d itself (direct_response)", status)}
	if body != "" {
		d.Reason += ": " + body
	}
	switch status {
	case 503:
		d.Kind = KindUnavailable
		if body == "" {
			// The translator's answer for a route none of whose services
			// exist: there is no body to say so, so say it here.
			d.Reason = "the route answers 503: it forwards to no service that exists"
			if owner != nil {
				d.Fix = fmt.Sprintf("%s.services: create the Service(s) named there, or fix their names and ports", owner)
			}
		}
	case 403:
		d.Kind = KindForbidden
	case 404:
		d.Kind = KindNotFound
	}
	if d.Fix == "" && owner != nil && status >= 500 {
		d.Fix = fmt.Sprintf("see the status of HTTPProxy %s", owner.HTTPProxy)
		if len(owner.Problems) > 0 {
			d.Fix = fmt.Sprintf("HTTPProxy %s: %s", owner.HTTPProxy, strings.Join(owner.Problems, "; "))
		}
	}
	w.decide(d)
}

// redirect computes the Location Envoy sends and the status code.
func (w *walk) redirect(m *envoy_config_route_v3.RouteMatch, rd *envoy_config_route_v3.RedirectAction) (string, int) {
	scheme := w.req.Scheme
	schemeChanged := false
	switch s := rd.GetSchemeRewriteSpecifier().(type) {
	case *envoy_config_route_v3.RedirectAction_HttpsRedirect:
		if s.HttpsRedirect {
			schemeChanged, scheme = scheme != "https", "https"
		}
	case *envoy_config_route_v3.RedirectAction_SchemeRedirect:
		schemeChanged, scheme = scheme != s.SchemeRedirect, s.SchemeRedirect
	}
	host, port, err := net.SplitHostPort(w.req.Authority)
	if err != nil {
		host, port = w.req.Authority, ""
	}
	if rd.GetHostRedirect() != "" {
		host = rd.GetHostRedirect()
	}
	switch {
	case rd.GetPortRedirect() != 0:
		port = fmt.Sprint(rd.GetPortRedirect())
	case schemeChanged && ((w.req.Scheme == "http" && port == "80") || (w.req.Scheme == "https" && port == "443")):
		// As RedirectAction documents: an explicit default port of the old
		// scheme goes, any other stays.
		port = ""
	}
	authority := host
	if port != "" {
		authority = net.JoinHostPort(host, port)
	}
	p, q, hasQuery := strings.Cut(w.req.Path, "?")
	switch r := rd.GetPathRewriteSpecifier().(type) {
	case *envoy_config_route_v3.RedirectAction_PathRedirect:
		p = r.PathRedirect
		if np, nq, ok := strings.Cut(p, "?"); ok {
			p, q, hasQuery = np, nq, true
		}
	case *envoy_config_route_v3.RedirectAction_PrefixRewrite:
		prefix := m.GetPrefix()
		if prefix == "" {
			prefix = m.GetPathSeparatedPrefix()
		}
		p = r.PrefixRewrite + strings.TrimPrefix(p, prefix)
	case *envoy_config_route_v3.RedirectAction_RegexRewrite:
		w.note("the redirect rewrites the path with a regex, which explain does not apply")
	}
	if rd.GetStripQuery() {
		hasQuery = false
	}
	loc := scheme + "://" + authority + p
	if hasQuery {
		loc += "?" + q
	}
	return loc, redirectStatus(rd.GetResponseCode())
}

func redirectStatus(c envoy_config_route_v3.RedirectAction_RedirectResponseCode) int {
	switch c {
	case envoy_config_route_v3.RedirectAction_FOUND:
		return 302
	case envoy_config_route_v3.RedirectAction_SEE_OTHER:
		return 303
	case envoy_config_route_v3.RedirectAction_TEMPORARY_REDIRECT:
		return 307
	case envoy_config_route_v3.RedirectAction_PERMANENT_REDIRECT:
		return 308
	}
	return 301
}

// routeAction explains a forwarding route: its clusters and their shares.
func (w *walk) routeAction(ra *envoy_config_route_v3.RouteAction, owner *Owner) {
	var targets []weighted
	switch c := ra.GetClusterSpecifier().(type) {
	case *envoy_config_route_v3.RouteAction_Cluster:
		targets = []weighted{{name: c.Cluster, weight: 1}}
	case *envoy_config_route_v3.RouteAction_WeightedClusters:
		for _, wc := range c.WeightedClusters.GetClusters() {
			targets = append(targets, weighted{name: wc.GetName(), weight: uint64(wc.GetWeight().GetValue())})
		}
	case *envoy_config_route_v3.RouteAction_ClusterHeader:
		v, ok := w.req.header(strings.ToLower(c.ClusterHeader))
		if !ok {
			w.decide(Decision{Kind: KindUnavailable, Status: 503, Owner: owner, Reason: fmt.Sprintf("the route takes its cluster from header %s, which is absent", c.ClusterHeader)})
			return
		}
		targets = []weighted{{name: v, weight: 1}}
	default:
		w.decide(Decision{Kind: KindUnavailable, Status: 503, Owner: owner, Reason: fmt.Sprintf("the route picks its cluster by %T, which explain does not evaluate", c)})
		return
	}
	if len(ra.GetHashPolicy()) > 0 {
		w.note("the route hashes requests onto endpoints: shares are averages over many clients, a given client always reaches the same endpoint")
	}
	w.forward(targets, owner, "the route forwards")
}

// forward explains sending the request to weighted clusters and decides:
// forward when some share reaches an endpoint, 503 when none does.
func (w *walk) forward(targets []weighted, owner *Owner, why string) {
	var sum uint64
	for _, t := range targets {
		sum += t.weight
	}
	if sum == 0 {
		w.decide(Decision{Kind: KindUnavailable, Status: 503, Owner: owner, Reason: "every cluster of the route has weight 0"})
		return
	}
	unavailable := 0.0
	var problems []string
	for _, t := range targets {
		b := w.backend(t.name, 100*float64(t.weight)/float64(sum))
		unavailable += b.Unavailable
		if b.Problem != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", b.Cluster, b.Problem))
		}
		w.out.Backends = append(w.out.Backends, b)
	}
	if unavailable >= 100-1e-9 {
		d := Decision{Kind: KindUnavailable, Status: 503, Owner: owner, Reason: strings.Join(problems, "; ")}
		if d.Reason == "" {
			d.Reason = "no cluster of the route has a healthy endpoint"
		}
		if owner != nil {
			d.Fix = fmt.Sprintf("the Services of %s.services have no ready endpoints: check their pods and readiness probes", owner)
			if missingCluster(w.out.Backends) {
				d.Fix = fmt.Sprintf("%s forwards to a cluster that is not served: see the status of HTTPProxy %s", owner, owner.HTTPProxy)
			}
		}
		w.decide(d)
		return
	}
	d := Decision{Kind: KindForward, Owner: owner, Reason: why + " to " + describeTargets(w.out.Backends)}
	if unavailable > 1e-9 {
		d.Reason += fmt.Sprintf("; %.1f%% of requests get 503 (%s)", unavailable, strings.Join(problems, "; "))
	}
	w.decide(d)
}

func describeTargets(bs []Backend) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		if len(bs) == 1 {
			parts = append(parts, "cluster "+b.Cluster)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%.1f%%)", b.Cluster, b.Weight))
	}
	return strings.Join(parts, ", ")
}

func missingCluster(bs []Backend) bool {
	for _, b := range bs {
		if b.Problem == problemNoCluster {
			return true
		}
	}
	return false
}
