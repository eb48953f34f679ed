package translator

import (
	"cmp"
	"strings"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// routeAction builds the forwarding part of a route, or nil when the
// Forward has no backend at all (every service missing).
func routeAction(r *dag.Route) *envoy_config_route_v3.RouteAction {
	f := r.Forward
	// One allocation for the action and its cluster, which most routes
	// name.
	b := &struct {
		a       envoy_config_route_v3.RouteAction
		cluster envoy_config_route_v3.RouteAction_Cluster
	}{}
	a := &b.a
	a.Timeout, a.IdleTimeout = optDuration(r.ResponseTimeout), optDuration(r.IdleTimeout)
	a.RetryPolicy, a.HashPolicy = retryPolicy(r.Retry), hashPolicies(r.HashPolicies)
	switch {
	case f.Cluster != nil:
		b.cluster.Cluster = f.Cluster.Name
		a.ClusterSpecifier = &b.cluster
	case len(f.Weighted) > 0:
		a.ClusterSpecifier = &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: weightedClusters(f.Weighted, r.CookieRewrites)}
	default:
		return nil
	}
	a.RequestMirrorPolicies = mirrorPolicies(f.Mirrors)
	a.InternalRedirectPolicy = internalRedirectPolicy(r.InternalRedirect)
	if r.PrefixRewrite != "" {
		a.PrefixRewrite = r.PrefixRewrite
	}
	if r.Websocket {
		a.UpgradeConfigs = []*envoy_config_route_v3.RouteAction_UpgradeConfig{{
			UpgradeType: upgradeWebsocket,
			Enabled:     boolValue(true),
		}}
	}
	return a
}

// weightedClusters splits a route between per-service clusters. The DAG
// only does this when a service has its own header policy (site/architecture.md,
// decision 2); otherwise the services share one cluster and the split
// happens in its locality weights.
func weightedClusters(ws []dag.WeightedCluster, routeCookies []dag.CookieRewrite) *envoy_config_route_v3.WeightedCluster {
	out := &envoy_config_route_v3.WeightedCluster{}
	for _, w := range ws {
		if w.Cluster == nil {
			continue
		}
		cw := &envoy_config_route_v3.WeightedCluster_ClusterWeight{
			Name:   w.Cluster.Name,
			Weight: u32(w.Weight),
		}
		var host string
		cw.RequestHeadersToAdd, cw.RequestHeadersToRemove, host = headerOps(w.RequestHeaders)
		cw.ResponseHeadersToAdd, cw.ResponseHeadersToRemove, _ = headerOps(w.ResponseHeaders)
		if host = cmp.Or(w.HostRewrite, host); host != "" {
			cw.HostRewriteSpecifier = &envoy_config_route_v3.WeightedCluster_ClusterWeight_HostRewriteLiteral{HostRewriteLiteral: host}
		}
		cw.TypedPerFilterConfig = withCookies(nil, mergeCookies(routeCookies, w.CookieRewrites))
		out.Clusters = append(out.Clusters, cw)
	}
	return out
}

// mirrorPolicies copies a percentage of requests to each mirror. A mirror
// at 0 % is left out rather than sent as runtime_fraction 0: Contour reads
// an unset weight as 100 %, and an absent mirror cannot be misread.
func mirrorPolicies(ms []dag.Mirror) []*envoy_config_route_v3.RouteAction_RequestMirrorPolicy {
	var out []*envoy_config_route_v3.RouteAction_RequestMirrorPolicy
	for _, m := range ms {
		if m.Cluster == nil || m.Percent == 0 {
			continue
		}
		out = append(out, &envoy_config_route_v3.RouteAction_RequestMirrorPolicy{
			Cluster: m.Cluster.Name,
			RuntimeFraction: &envoy_config_core_v3.RuntimeFractionalPercent{
				DefaultValue: &envoy_type_v3.FractionalPercent{
					Numerator:   min(m.Percent, 100),
					Denominator: envoy_type_v3.FractionalPercent_HUNDRED,
				},
			},
		})
	}
	return out
}

// retryPolicy maps a DAG retry policy. A count of 0 means "no retries" in
// Switchyard's API; with no retry policy Envoy does not retry, so none is
// sent (and gRPC, which NACKs num_retries 0, is spared one). An empty
// condition list takes the API's default, "5xx".
//
// Status codes are passed through as they are: they only act under the
// "retriable-status-codes" condition, and when the user left it out the DAG
// says so in the proxy's status rather than having it added here.
func retryPolicy(rp *dag.Retry) *envoy_config_route_v3.RetryPolicy {
	if rp == nil || rp.Count == 0 {
		return nil
	}
	on := rp.RetryOn
	if len(on) == 0 {
		on = []string{"5xx"}
	}
	return &envoy_config_route_v3.RetryPolicy{
		RetryOn:              strings.Join(on, ","),
		NumRetries:           u32(rp.Count),
		PerTryTimeout:        optDuration(rp.PerTryTimeout),
		RetriableStatusCodes: rp.RetriableStatusCodes,
	}
}

// hashPolicies maps the route's hash inputs, in order; they only matter
// for RING_HASH clusters. A Cookie input has Envoy set a session cookie
// (TTL 0: the browser drops it on exit) when the request carries none, so
// that the client sticks to one backend from its next request on.
func hashPolicies(hps []dag.HashPolicy) []*envoy_config_route_v3.RouteAction_HashPolicy {
	out := make([]*envoy_config_route_v3.RouteAction_HashPolicy, 0, len(hps))
	for _, h := range hps {
		hp := &envoy_config_route_v3.RouteAction_HashPolicy{Terminal: h.Terminal}
		switch {
		case h.Header != "":
			hp.PolicySpecifier = &envoy_config_route_v3.RouteAction_HashPolicy_Header_{
				Header: &envoy_config_route_v3.RouteAction_HashPolicy_Header{HeaderName: h.Header},
			}
		case h.QueryParameter != "":
			hp.PolicySpecifier = &envoy_config_route_v3.RouteAction_HashPolicy_QueryParameter_{
				QueryParameter: &envoy_config_route_v3.RouteAction_HashPolicy_QueryParameter{Name: h.QueryParameter},
			}
		case h.SourceIP:
			hp.PolicySpecifier = &envoy_config_route_v3.RouteAction_HashPolicy_ConnectionProperties_{
				ConnectionProperties: &envoy_config_route_v3.RouteAction_HashPolicy_ConnectionProperties{SourceIp: true},
			}
		case h.Cookie != "":
			hp.PolicySpecifier = &envoy_config_route_v3.RouteAction_HashPolicy_Cookie_{
				Cookie: &envoy_config_route_v3.RouteAction_HashPolicy_Cookie{Name: h.Cookie, Ttl: duration(0), Path: "/"},
			}
		default:
			continue
		}
		out = append(out, hp)
	}
	return out
}

// headerOps maps a header policy to Envoy's add and remove lists.
//
// Envoy rejects any header list that sets or removes "host" or a
// ":"-prefixed pseudo-header. The DAG moves a Host entry to HostRewrite; if
// one still arrives here its value is returned, for the caller to use as
// host_rewrite_literal when the DAG gave none, and pseudo-headers and
// removals of "host" are dropped.
func headerOps(p *dag.HeadersPolicy) (add []*envoy_config_core_v3.HeaderValueOption, remove []string, host string) {
	if p == nil {
		return nil, nil, ""
	}
	for _, h := range p.Set {
		switch {
		case strings.EqualFold(h.Name, "host"):
			host = h.Value
		case strings.HasPrefix(h.Name, ":"):
		default:
			add = append(add, &envoy_config_core_v3.HeaderValueOption{
				Header:       &envoy_config_core_v3.HeaderValue{Key: h.Name, Value: h.Value},
				AppendAction: envoy_config_core_v3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
			})
		}
	}
	for _, name := range p.Remove {
		if strings.EqualFold(name, "host") || strings.HasPrefix(name, ":") {
			continue
		}
		remove = append(remove, name)
	}
	return add, remove, host
}
