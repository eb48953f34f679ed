package dag_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// largeBadCases are the catalogue's cases too large to keep as files:
// huge objects and values, made as objects (parsing 10 MB of YAML would
// only test the YAML parser). Each must be refused with a status of
// bounded size: a 10 MB value must not end up in a Kubernetes status.
func largeBadCases() []badCase {
	bad := objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: "bad"}
	huge := strings.Repeat("a", 10<<20)
	app := []switchyardv1.Service{{Name: "app", Port: 80}}
	proxy := func(fqdn string, routes ...switchyardv1.Route) []runtime.Object {
		return []runtime.Object{&switchyardv1.HTTPProxy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bad"},
			Spec:       switchyardv1.HTTPProxySpec{VirtualHost: &switchyardv1.VirtualHost{Fqdn: fqdn}, Routes: routes},
		}}
	}
	repeat := func(n int, r switchyardv1.Route) []switchyardv1.Route {
		out := make([]switchyardv1.Route, n)
		for i := range out {
			out[i] = r
		}
		return out
	}
	return []badCase{
		{
			name:    "huge-header-value-10MB",
			objs:    proxy("bad.example.com", switchyardv1.Route{Services: app, RequestHeadersPolicy: &switchyardv1.HeadersPolicy{Set: []switchyardv1.HeaderValue{{Name: "x-a", Value: huge}}}}),
			expects: []expectation{{key: bad, typ: dag.ErrRoute, reason: "InvalidHeadersPolicy", text: "spec.routes[0].requestHeadersPolicy: set[0].value"}},
		},
		{
			name:    "huge-fqdn-10MB",
			objs:    proxy(huge+".com", switchyardv1.Route{Services: app}),
			expects: []expectation{{key: bad, typ: dag.ErrVirtualHost, reason: "InvalidFQDN", text: "spec.virtualhost.fqdn"}},
		},
		{
			name:    "huge-regex-10MB",
			objs:    proxy("bad.example.com", switchyardv1.Route{Services: app, Conditions: []switchyardv1.MatchCondition{{Regex: "/" + huge}}}),
			expects: []expectation{{key: bad, typ: dag.ErrRoute, reason: "InvalidCondition", text: "spec.routes[0].conditions[0]: regex"}},
		},
		{
			name:    "huge-relative-path-10MB",
			objs:    proxy("bad.example.com", switchyardv1.Route{Services: app, Conditions: []switchyardv1.MatchCondition{{Prefix: huge}}}),
			expects: []expectation{{key: bad, typ: dag.ErrRoute, reason: "InvalidCondition", text: "spec.routes[0].conditions[0].prefix"}},
		},
		{
			name:    "5000-routes-same-conditions",
			objs:    proxy("bad.example.com", repeat(5000, switchyardv1.Route{Services: app, Conditions: []switchyardv1.MatchCondition{{Prefix: "/same"}}})...),
			expects: []expectation{{key: bad, typ: dag.ErrRoute, reason: "DuplicateConditions", text: "conditions: match the same requests as spec.routes[0]"}},
		},
		{
			name:    "5000-routes-each-invalid",
			objs:    proxy("bad.example.com", repeat(5000, switchyardv1.Route{Services: []switchyardv1.Service{{Name: "app", Port: 0}}, Conditions: []switchyardv1.MatchCondition{{Prefix: "/x"}}})...),
			expects: []expectation{{key: bad, typ: dag.ErrService, reason: "InvalidPort", text: "spec.routes[0].services[0].port"}},
		},
	}
}

// TestLargeBadInputs runs the generated cases like the files, and checks
// that no status grows with the input: at most MaxSubConditions errors
// (plus the one counting the rest) and 64 KiB of messages, however many
// errors and however long the values.
func TestLargeBadInputs(t *testing.T) {
	for _, c := range largeBadCases() {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res := runBadCase(t, c)
			t.Logf("loaded, built, translated and checked in %v", time.Since(start))
			for _, st := range res.Statuses {
				size := len(st.Description)
				for _, e := range append(st.Errors, st.Warnings...) {
					size += len(e.Message)
				}
				if len(st.Errors) > dag.MaxSubConditions+1 || size > 64<<10 {
					t.Errorf("%v: %d errors, %d bytes of messages", st.Key, len(st.Errors), size)
				}
			}
		})
	}
}

// TestFiveThousandRoutes serves one proxy with 5,000 distinct routes: not
// an error, and it must translate into valid resources. How fast it builds
// is for the benchmarks; the time is logged.
func TestFiveThousandRoutes(t *testing.T) {
	routes := make([]switchyardv1.Route, 5000)
	for i := range routes {
		routes[i] = switchyardv1.Route{Services: []switchyardv1.Service{{Name: "app", Port: 80}}, Conditions: []switchyardv1.MatchCondition{{Prefix: fmt.Sprintf("/r%d", i)}}}
	}
	big := &switchyardv1.HTTPProxy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "big"},
		Spec:       switchyardv1.HTTPProxySpec{VirtualHost: &switchyardv1.VirtualHost{Fqdn: "big.example.com"}, Routes: routes},
	}
	c := badCase{name: "5000-routes", objs: []runtime.Object{big}}
	start := time.Now()
	runBadCase(t, c)
	t.Logf("5,000 routes built, translated and checked in %v", time.Since(start).Round(time.Millisecond))
}
