package main

import (
	"strings"
	"testing"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_extensions_common_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	envoy_filter_http_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// rendered is what Switchyard configures Envoy with for this directory,
// built as `switchyard render --source examples/ratelimit
// --rate-limit-service rl/ratelimit` builds it (the README's command).
type rendered struct {
	domain string
	vhost  *envoy_config_route_v3.VirtualHost
}

func render(t *testing.T) rendered {
	t.Helper()
	snap, problems, err := dirsource.Load(".")
	if err != nil || len(problems) > 0 {
		t.Fatalf("loading the example: %v %v", err, problems)
	}
	res := dag.Build(snap, dag.Options{RateLimitService: &types.NamespacedName{Namespace: "rl", Name: "ratelimit"}})
	for _, st := range res.Statuses {
		if len(st.Errors) > 0 || len(st.Warnings) > 0 {
			t.Fatalf("%s: %s", st.Key, st.Description)
		}
	}
	out := translator.Envoy(res.DAG, snap, translator.DefaultOptions())
	var r rendered
	for _, rc := range out.Routes {
		if rc.Name == translator.HTTPRouteName("shop.example.com") {
			r.vhost = rc.VirtualHosts[0]
		}
	}
	for _, l := range out.Listeners {
		if l.Name != translator.HTTPListenerName {
			continue
		}
		hcm := &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{}
		if err := l.FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(hcm); err != nil {
			t.Fatal(err)
		}
		for _, f := range hcm.HttpFilters {
			if f.Name == "envoy.filters.http.ratelimit" {
				cfg := &envoy_filter_http_ratelimit_v3.RateLimit{}
				if err := f.GetTypedConfig().UnmarshalTo(cfg); err != nil {
					t.Fatal(err)
				}
				r.domain = cfg.Domain
			}
		}
	}
	if r.vhost == nil || r.domain == "" {
		t.Fatalf("the plain-HTTP listener has no ratelimit filter, or shop.example.com no route configuration")
	}
	return r
}

// sample is a request as the ratelimit filter sees it.
type sample struct {
	path    string
	headers map[string]string
	remote  string
}

// descriptors applies the rate limit actions Envoy would for the route s
// matches, as Envoy's ratelimit filter does: the route's own rate_limits
// replace the virtual host's (vh_rate_limits OVERRIDE), IGNORE drops the
// host's, and a descriptor with an action that produces nothing is not
// sent.
func (r rendered) descriptors(t *testing.T, s sample) []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor {
	t.Helper()
	rt := r.route(t, s.path)
	limits := rt.GetRoute().GetRateLimits()
	if len(limits) == 0 {
		limits = r.vhost.RateLimits
		if pf := rt.TypedPerFilterConfig["envoy.filters.http.ratelimit"]; pf != nil {
			per := &envoy_filter_http_ratelimit_v3.RateLimitPerRoute{}
			if err := pf.UnmarshalTo(per); err != nil {
				t.Fatal(err)
			}
			if per.VhRateLimits == envoy_filter_http_ratelimit_v3.RateLimitPerRoute_IGNORE {
				limits = nil
			}
		}
	}
	var out []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor
	for _, rl := range limits {
		d := &envoy_extensions_common_ratelimit_v3.RateLimitDescriptor{}
		for _, a := range rl.Actions {
			e := s.entry(t, a)
			if e == nil {
				d = nil
				break
			}
			d.Entries = append(d.Entries, e)
		}
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

// route is the first route whose path match s.path meets, in Envoy's order.
func (r rendered) route(t *testing.T, path string) *envoy_config_route_v3.Route {
	t.Helper()
	for _, rt := range r.vhost.Routes {
		m := rt.GetMatch()
		switch {
		case m.GetPrefix() != "" && strings.HasPrefix(path, m.GetPrefix()):
			return rt
		case m.GetPathSeparatedPrefix() != "":
			p := m.GetPathSeparatedPrefix()
			if path == p || strings.HasPrefix(path, p+"/") {
				return rt
			}
		}
	}
	t.Fatalf("no route of shop.example.com matches %s", path)
	return nil
}

func (s sample) entry(t *testing.T, a *envoy_config_route_v3.RateLimit_Action) *envoy_extensions_common_ratelimit_v3.RateLimitDescriptor_Entry {
	t.Helper()
	switch {
	case a.GetGenericKey() != nil:
		key := a.GetGenericKey().GetDescriptorKey()
		if key == "" {
			key = "generic_key"
		}
		return &envoy_extensions_common_ratelimit_v3.RateLimitDescriptor_Entry{Key: key, Value: a.GetGenericKey().GetDescriptorValue()}
	case a.GetRemoteAddress() != nil:
		return &envoy_extensions_common_ratelimit_v3.RateLimitDescriptor_Entry{Key: "remote_address", Value: s.remote}
	case a.GetRequestHeaders() != nil:
		v, ok := s.headers[a.GetRequestHeaders().GetHeaderName()]
		if !ok {
			return nil
		}
		return &envoy_extensions_common_ratelimit_v3.RateLimitDescriptor_Entry{Key: a.GetRequestHeaders().GetDescriptorKey(), Value: v}
	case a.GetHeaderValueMatch() != nil:
		m := a.GetHeaderValueMatch()
		all := true
		for _, h := range m.Headers {
			all = all && s.headerMatches(t, h)
		}
		if all != m.GetExpectMatch().GetValue() {
			return nil
		}
		return &envoy_extensions_common_ratelimit_v3.RateLimitDescriptor_Entry{Key: "header_match", Value: m.DescriptorValue}
	}
	t.Fatalf("an action this test does not know: %v", a)
	return nil
}

// headerMatches evaluates the header matchers Switchyard writes for
// presence and exact conditions.
func (s sample) headerMatches(t *testing.T, h *envoy_config_route_v3.HeaderMatcher) bool {
	t.Helper()
	v, present := s.headers[h.Name]
	var ok bool
	switch {
	case h.GetPresentMatch():
		ok = present
	case h.GetStringMatch().GetExact() != "":
		ok = present && v == h.GetStringMatch().GetExact()
	default:
		t.Fatalf("a header matcher this test does not know: %v", h)
	}
	return ok != h.InvertMatch
}
