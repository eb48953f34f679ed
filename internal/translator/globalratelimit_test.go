package translator

import (
	"testing"
	"time"

	envoy_filter_http_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// TestGlobalRateLimitFilter covers what the goldens' plaintext service
// does not: fail-open, no timeout (Envoy's default), no X-RateLimit
// headers, and a TLS service, whose calls carry the verified subject name
// as :authority, as ext_authz's do.
func TestGlobalRateLimitFilter(t *testing.T) {
	if f := globalRateLimitFilters(nil); f != nil {
		t.Fatalf("no service: %v, want no filter", f)
	}
	svc := &dag.RateLimitService{
		Cluster:  &dag.Cluster{Name: "rl/rls/8443/abc", Spec: dag.ClusterSpec{UpstreamTLS: &dag.UpstreamTLS{SubjectName: "rls.example.com"}}},
		FailOpen: true,
		Domain:   "edge",
	}
	fs := globalRateLimitFilters(svc)
	if len(fs) != 1 || fs[0].Name != filterRateLimit {
		t.Fatalf("%v, want one %s", fs, filterRateLimit)
	}
	cfg := &envoy_filter_http_ratelimit_v3.RateLimit{}
	if err := fs[0].GetTypedConfig().UnmarshalTo(cfg); err != nil {
		t.Fatal(err)
	}
	g := cfg.GetRateLimitService().GetGrpcService().GetEnvoyGrpc()
	switch {
	case cfg.Domain != "edge", cfg.FailureModeDeny, cfg.Timeout != nil,
		cfg.EnableXRatelimitHeaders != envoy_filter_http_ratelimit_v3.RateLimit_OFF:
		t.Errorf("filter %v", cfg)
	case g.GetClusterName() != "rl/rls/8443/abc" || g.GetAuthority() != "rls.example.com":
		t.Errorf("grpc service %v, want the cluster with authority rls.example.com", g)
	}
	svc.FailOpen, svc.Timeout, svc.XHeaders = false, 250*time.Millisecond, true
	if err := globalRateLimitFilters(svc)[0].GetTypedConfig().UnmarshalTo(cfg); err != nil {
		t.Fatal(err)
	}
	if !cfg.FailureModeDeny || cfg.Timeout.AsDuration() != 250*time.Millisecond || cfg.EnableXRatelimitHeaders != envoy_filter_http_ratelimit_v3.RateLimit_DRAFT_VERSION_03 {
		t.Errorf("fail closed, 250ms, X-RateLimit headers: %v", cfg)
	}
}

// TestPlainRateLimitService: the plain listener's service is that of the
// first host in name order that has one, whatever the DAG's order.
func TestPlainRateLimitService(t *testing.T) {
	a := &dag.RateLimitService{Domain: "a", Cluster: &dag.Cluster{Name: "a"}}
	b := &dag.RateLimitService{Domain: "b", Cluster: &dag.Cluster{Name: "b"}}
	vh := func(fqdn string, s *dag.RateLimitService) *dag.VirtualHost {
		v := &dag.VirtualHost{FQDN: fqdn}
		v.RateLimitService = s
		return v
	}
	if got := plainRateLimitService([]*dag.VirtualHost{vh("c.example.com", b), vh("a.example.com", nil), vh("b.example.com", a)}); got != a {
		t.Fatalf("got %v, want b.example.com's", got)
	}
	if got := plainRateLimitService([]*dag.VirtualHost{vh("a.example.com", nil)}); got != nil {
		t.Fatalf("got %v, want none", got)
	}
}
