package explain_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/explain"
)

// decision is what a case expects of a result. Empty fields are not
// checked; check, when set, looks at the rest.
type decision struct {
	kind   string
	status int
	// owner is the "namespace/name field" of the decision's owner.
	owner string
	// fix and reason are substrings of the decision's Fix and Reason.
	fix, reason string
	check       func(t *testing.T, r *explain.Result)
}

type decisionCase struct {
	name    string
	golden  string // directory under internal/translator/testdata
	group   string
	url     string
	headers []string // "Name: value"
	want    decision
}

// TestDecisions explains requests against the resources of the
// translator's golden cases. Each case names the golden input, the
// request, and the decision a client would see.
func TestDecisions(t *testing.T) {
	for _, tc := range decisionCases {
		t.Run(tc.name, func(t *testing.T) {
			req := explain.Request{URL: tc.url, Group: tc.group}
			for _, h := range tc.headers {
				n, v, ok := strings.Cut(h, ":")
				if !ok {
					t.Fatalf("header %q: want Name: value", h)
				}
				req.Headers = append(req.Headers, explain.Header{Name: n, Value: strings.TrimSpace(v)})
			}
			group := tc.group
			if group == "" {
				group = "envoy"
			}
			r, err := explain.Explain(resources(t, tc.golden, group), req)
			if err != nil {
				t.Fatal(err)
			}
			checkDecision(t, r, tc.want)
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("the result does not marshal to JSON: %v", err)
			}
			if t.Failed() {
				t.Logf("explanation:\n%s", r.Text())
			}
		})
	}
}

func checkDecision(t *testing.T, r *explain.Result, want decision) {
	t.Helper()
	d := r.Decision
	if want.kind != "" && d.Kind != want.kind {
		t.Errorf("kind = %q, want %q (reason: %s)", d.Kind, want.kind, d.Reason)
	}
	if want.status != 0 && d.Status != want.status {
		t.Errorf("status = %d, want %d", d.Status, want.status)
	}
	if want.owner != "" {
		got := ""
		if d.Owner != nil {
			got = strings.TrimSpace(d.Owner.HTTPProxy + " " + d.Owner.Field)
		}
		if got != want.owner {
			t.Errorf("owner = %q, want %q", got, want.owner)
		}
	}
	if want.fix != "" && !strings.Contains(d.Fix, want.fix) {
		t.Errorf("fix = %q, want it to contain %q", d.Fix, want.fix)
	}
	if want.reason != "" && !strings.Contains(d.Reason, want.reason) {
		t.Errorf("reason = %q, want it to contain %q", d.Reason, want.reason)
	}
	if want.check != nil {
		want.check(t, r)
	}
}

// shares returns each endpoint's share of the route's requests, by
// address, rounded to 0.1 %.
func shares(r *explain.Result) map[string]float64 {
	out := map[string]float64{}
	for _, b := range r.Backends {
		for _, p := range b.Priorities {
			for _, l := range p.Localities {
				for _, e := range l.Endpoints {
					out[e.Address] += e.Share
				}
			}
		}
	}
	for k, v := range out {
		out[k] = math.Round(v*10) / 10
	}
	return out
}

func wantShares(want map[string]float64) func(*testing.T, *explain.Result) {
	return func(t *testing.T, r *explain.Result) {
		t.Helper()
		got := shares(r)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("endpoint shares = %v, want %v", got, want)
		}
	}
}

// wantRoutesTried checks how many routes were tried and that only the last
// matched.
func wantRoutesTried(n int) func(*testing.T, *explain.Result) {
	return func(t *testing.T, r *explain.Result) {
		t.Helper()
		if len(r.Routes) != n {
			t.Errorf("%d routes tried, want %d", len(r.Routes), n)
		}
		for i, rc := range r.Routes {
			if rc.Matched != (i == len(r.Routes)-1 && r.Decision.Kind != explain.KindNotFound) {
				t.Errorf("route %d matched = %v", i, rc.Matched)
			}
			if !rc.Matched && rc.Why == "" {
				t.Errorf("route %d says nothing about why it did not match", i)
			}
		}
	}
}

func wantPolicy(kind, effect string) func(*testing.T, *explain.Result) {
	return func(t *testing.T, r *explain.Result) {
		t.Helper()
		for _, p := range r.Policies {
			if p.Kind == kind {
				if p.Effect != effect {
					t.Errorf("policy %s: effect %q, want %q", kind, p.Effect, effect)
				}
				return
			}
		}
		t.Errorf("no %s policy in %+v", kind, r.Policies)
	}
}

func wantLocation(loc string) func(*testing.T, *explain.Result) {
	return func(t *testing.T, r *explain.Result) {
		t.Helper()
		if r.Decision.Location != loc {
			t.Errorf("location = %q, want %q", r.Decision.Location, loc)
		}
	}
}

func all(checks ...func(*testing.T, *explain.Result)) func(*testing.T, *explain.Result) {
	return func(t *testing.T, r *explain.Result) {
		t.Helper()
		for _, c := range checks {
			c(t, r)
		}
	}
}

var decisionCases = []decisionCase{
	// Hits.
	{name: "hit", golden: "one-service", url: "http://shop.example.com/cart",
		want: decision{kind: explain.KindForward, owner: "shop/web spec.routes[0]",
			check: wantShares(map[string]float64{"10.1.0.11:8080": 50, "10.1.0.12:8080": 50})}},
	{name: "hit on the port of the HTTPS listener, by the host:* domain", golden: "authorization", url: "https://admin.example.com:8443/healthz",
		want: decision{kind: explain.KindForward, owner: "admin/admin spec.routes[0]",
			check: func(t *testing.T, r *explain.Result) {
				if r.VirtualHost == nil || r.VirtualHost.Domain != "admin.example.com:*" {
					t.Errorf("virtual host = %+v, want the domain admin.example.com:*", r.VirtualHost)
				}
			}}},
	{name: "case-insensitive host over TLS", golden: "authorization", url: "https://ADMIN.Example.com/healthz",
		want: decision{kind: explain.KindForward, owner: "admin/admin spec.routes[0]"}},
	{name: "plain-HTTP host matching ignores case", golden: "one-service", url: "http://Shop.Example.com/",
		want: decision{kind: explain.KindForward, owner: "shop/web spec.routes[0]"}},
	{name: "plain-HTTP host only a wildcard serves", golden: "wildcard-hosts", url: "http://shop.example.com/",
		want: decision{kind: explain.KindRedirect, owner: "shop/wildcard spec.routes[0]"}},
	{name: "plain-HTTP exact host wins over the wildcard", golden: "wildcard-hosts", url: "http://API.example.com/",
		want: decision{kind: explain.KindForward, owner: "shop/api spec.routes[0]"}},
	{name: "a wildcard serves one label only", golden: "wildcard-hosts", url: "http://a.b.example.com/",
		want: decision{kind: explain.KindNotFound, status: 404}},
	{name: "port in the Host header selects the same scope", golden: "one-service", url: "http://shop.example.com/", headers: []string{"Host: shop.example.com:8080"},
		want: decision{kind: explain.KindForward, owner: "shop/web spec.routes[0]"}},

	{name: "TLS to the plain-HTTP listener's port", golden: "authorization", url: "https://admin.example.com:8080/",
		want: decision{kind: explain.KindRefused, reason: "does not speak https"}},

	// 404s.
	{name: "404 no virtual host", golden: "one-service", url: "http://nope.example.com/",
		want: decision{kind: explain.KindNotFound, status: 404, fix: `spec.virtualhost.fqdn "nope.example.com"`}},
	{name: "404 no route", golden: "service-without-ready-endpoints", url: "http://tools.example.com/other",
		want: decision{kind: explain.KindNotFound, status: 404, owner: "tools/app", fix: "add a route matching /other", check: wantRoutesTried(2)}},
	{name: "path_separated_prefix stops at segment boundaries", golden: "service-without-ready-endpoints", url: "http://tools.example.com/apis",
		want: decision{kind: explain.KindNotFound, status: 404, check: func(t *testing.T, r *explain.Result) {
			if len(r.Routes) != 2 || !strings.Contains(r.Routes[1].Why, "segment boundary") {
				t.Errorf("want the /api route to say it stops at a segment boundary: %+v", r.Routes)
			}
		}}},
	{name: "direct 404", golden: "redirect-and-direct-response", url: "http://old.example.com/.well-known/acme",
		want: decision{kind: explain.KindNotFound, status: 404, owner: "web/www spec.routes[4]"}},

	// 503s.
	{name: "503 no healthy endpoint (draining only)", golden: "service-without-ready-endpoints", url: "http://tools.example.com/api/v1",
		want: decision{kind: explain.KindUnavailable, status: 503, owner: "tools/app spec.routes[0]", reason: "no healthy endpoint"}},
	{name: "503 no endpoints at all", golden: "service-without-ready-endpoints", url: "http://tools.example.com/batch",
		want: decision{kind: explain.KindUnavailable, status: 503, owner: "tools/app spec.routes[1]", fix: "spec.routes[1].services"}},
	{name: "503 invalid route", golden: "invalid-weights", url: "http://weights.example.com/zero",
		want: decision{kind: explain.KindUnavailable, status: 503, owner: "weights/app spec.routes[1]", fix: "spec.routes[1].services: the weights of priority 0 sum to 0"}},
	{name: "503 authorization unavailable", golden: "authorization-unavailable", url: "https://admin.example.com/api",
		want: decision{kind: explain.KindUnavailable, status: 503, owner: "admin/admin spec.routes[1]", fix: "ExtensionService auth/authz is invalid"}},
	{name: "the route that opts out of unavailable authorization still forwards", golden: "authorization-unavailable", url: "https://admin.example.com/healthz",
		want: decision{kind: explain.KindForward, owner: "admin/admin spec.routes[0]"}},

	// Authorization.
	{name: "authorized route: forwarded if the server allows", golden: "authorization", url: "https://admin.example.com/api/users",
		want: decision{kind: explain.KindForward, owner: "admin/admin spec.routes[1]", check: all(wantPolicy("ext_authz", "applies"),
			func(t *testing.T, r *explain.Result) {
				if !strings.Contains(r.Decision.Conditional, "authorization server") {
					t.Errorf("conditional = %q, want it to depend on the authorization server", r.Decision.Conditional)
				}
			})}},
	{name: "route that disables authorization", golden: "authorization", url: "https://admin.example.com/healthz",
		want: decision{kind: explain.KindForward, check: wantPolicy("ext_authz", "skipped")}},
	{name: "403 for gRPC clients on an authorized host", golden: "authorization", group: "grpc", url: "xds:///admin.example.com/admin.v1.Users/List",
		want: decision{kind: explain.KindForbidden, status: 403, owner: "admin/admin spec.routes[2]"}},
	{name: "gRPC reaches the route that opts out", golden: "authorization", group: "grpc", url: "xds:///admin.example.com/healthz",
		want: decision{kind: explain.KindForward, owner: "admin/admin spec.routes[0]"}},
	{name: "TLS host whose secret is not delegated: no handshake", golden: "tls-secret-not-delegated", url: "https://shop.example.com/",
		want: decision{kind: explain.KindRefused}},

	// Redirects.
	// The route sets port_redirect 443, which RedirectAction swaps in as
	// given.
	{name: "redirect to another host over https", golden: "redirect-and-direct-response", url: "http://old.example.com/a?b=c",
		want: decision{kind: explain.KindRedirect, status: 301, owner: "web/www spec.routes[0]", check: wantLocation("https://www.example.com:443/a?b=c")}},
	{name: "exact path redirect", golden: "redirect-and-direct-response", url: "http://old.example.com/login",
		want: decision{kind: explain.KindRedirect, status: 308, owner: "web/www spec.routes[1]"}},
	{name: "prefix redirect", golden: "redirect-and-direct-response", url: "http://old.example.com/docs/intro",
		want: decision{kind: explain.KindRedirect, status: 302, check: wantLocation("http://old.example.com/documentation/intro")}},
	{name: "exact path does not match a longer path", golden: "redirect-and-direct-response", url: "http://old.example.com/login/",
		want: decision{kind: explain.KindRedirect, owner: "web/www spec.routes[0]"}},
	{name: "plain-HTTP copy of a secure route redirects to https", golden: "authorization", url: "http://admin.example.com/api",
		want: decision{kind: explain.KindRedirect, status: 301, check: wantLocation("https://admin.example.com/api")}},
	{name: "https redirect keeps a port that is not http's default", golden: "authorization", url: "http://admin.example.com:8080/api",
		want: decision{kind: explain.KindRedirect, check: wantLocation("https://admin.example.com:8080/api")}},
	{name: "https redirect drops port 80", golden: "authorization", url: "http://admin.example.com/api", headers: []string{"Host: admin.example.com:80"},
		want: decision{kind: explain.KindRedirect, check: wantLocation("https://admin.example.com/api")}},
	{name: "direct response 200", golden: "redirect-and-direct-response", url: "http://old.example.com/robots.txt",
		want: decision{kind: explain.KindDirect, status: 200, owner: "web/www spec.routes[3]"}},

	// Header and query-parameter matchers, one route each.
	{name: "header exact", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"X-Canary: true"},
		want: decision{owner: "search/search spec.routes[0]"}},
	{name: "header exact is case-sensitive in its value", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"X-Canary: TRUE"},
		want: decision{owner: "search/search spec.routes[7]"}},
	{name: "header contains ignoring case, with another header absent", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"User-Agent: GoogleBOT/2.1"},
		want: decision{owner: "search/search spec.routes[1]"}},
	{name: "header absent fails when present", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"User-Agent: GoogleBOT/2.1", "Cookie: a=b"},
		want: decision{owner: "search/search spec.routes[7]"}},
	{name: "header regex and present", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"X-Tenant: acme-42", "X-Debug: 1"},
		want: decision{owner: "search/search spec.routes[2]"}},
	{name: "header regex must match the whole value", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"X-Tenant: acme-42x", "X-Debug: 1"},
		want: decision{owner: "search/search spec.routes[7]"}},
	{name: "inverted header matchers", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"X-Env: dev", "Accept: text/html"},
		want: decision{owner: "search/search spec.routes[3]"}},
	{name: "inverted header matcher on a matching value", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"X-Env: dev", "Accept: application/json"},
		want: decision{owner: "search/search spec.routes[7]"}},
	{name: "inverted header matcher never matches an absent header", golden: "header-and-query-conditions", url: "http://search.example.com/", headers: []string{"Accept: text/html"},
		want: decision{owner: "search/search spec.routes[7]"}},
	{name: "query exact", golden: "header-and-query-conditions", url: "http://search.example.com/?v=2",
		want: decision{owner: "search/search spec.routes[4]"}},
	{name: "query prefix ignoring case, and present", golden: "header-and-query-conditions", url: "http://search.example.com/?q=IMG%3Acats&safe",
		want: decision{owner: "search/search spec.routes[5]"}},
	{name: "query regex", golden: "header-and-query-conditions", url: "http://search.example.com/?page=12",
		want: decision{owner: "search/search spec.routes[6]"}},
	{name: "query regex must match the whole value", golden: "header-and-query-conditions", url: "http://search.example.com/?page=1234",
		want: decision{owner: "search/search spec.routes[7]", check: wantRoutesTried(8)}},
	{name: "only the first value of a query parameter counts", golden: "header-and-query-conditions", url: "http://search.example.com/?v=1&v=2",
		want: decision{owner: "search/search spec.routes[7]"}},
	{name: "gRPC: segment prefix as a full-match regex", golden: "authorization", group: "grpc", url: "xds:///admin.example.com/healthzz",
		want: decision{kind: explain.KindForbidden, owner: "admin/admin spec.routes[2]"}},

	// Weights, localities and priorities.
	{name: "weighted services across zones", golden: "weighted-three-services-two-zones", url: "http://checkout.example.com/",
		want: decision{kind: explain.KindForward, check: func(t *testing.T, r *explain.Result) {
			s := shares(r)
			var sum float64
			for _, v := range s {
				sum += v
			}
			if math.Abs(sum-100) > 0.5 || len(s) != 6 {
				t.Errorf("shares %v: want six endpoints sharing 100%%", s)
			}
		}}},
	{name: "priority 1 takes over from an empty priority 0", golden: "priorities", url: "http://api.example.com/jobs",
		want: decision{kind: explain.KindForward, check: all(wantShares(map[string]float64{"10.13.3.5:8080": 100}),
			func(t *testing.T, r *explain.Result) {
				if p := r.Backends[0].Priorities; len(p) != 2 || p[0].Load != 0 || p[1].Load != 100 {
					t.Errorf("priority loads %+v, want 0 and 100", p)
				}
			})}},
	{name: "priority 0 healthy enough keeps everything", golden: "priorities", url: "http://api.example.com/",
		want: decision{kind: explain.KindForward, check: wantShares(map[string]float64{"10.13.0.5:8080": 100, "10.13.1.5:8080": 0, "10.13.1.6:8080": 0})}},
}
