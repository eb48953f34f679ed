package dag_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// largeBadCases are the catalogue's cases too large to keep as files:
// huge objects and values. Each must be refused with a status message of
// bounded size (a 10 MB value must not end up in a Kubernetes status).
func largeBadCases() []badCase {
	bad := objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: "bad"}
	huge := strings.Repeat("a", 10<<20)
	proxyWith := func(routes string) []byte {
		return []byte("apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: bad, namespace: shop}\nspec:\n  virtualhost: {fqdn: bad.example.com}\n  routes:\n" + routes)
	}
	return []badCase{
		{
			name:    "generated/huge-header-value-10MB",
			body:    proxyWith("  - requestHeadersPolicy: {set: [{name: x-a, value: " + huge + "}]}\n    services: [{name: app, port: 80}]\n"),
			expects: []expectation{{key: bad, typ: dag.ErrRoute, reason: "InvalidHeadersPolicy", text: "spec.routes[0].requestHeadersPolicy: set[0].value"}},
		},
		{
			name:    "generated/huge-fqdn-10MB",
			body:    []byte("apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: bad, namespace: shop}\nspec:\n  virtualhost: {fqdn: " + huge + ".com}\n  routes: [{services: [{name: app, port: 80}]}]\n"),
			expects: []expectation{{key: bad, typ: dag.ErrVirtualHost, reason: "InvalidFQDN", text: "spec.virtualhost.fqdn"}},
		},
		{
			name:    "generated/huge-regex-10MB",
			body:    proxyWith("  - conditions: [{regex: /" + huge + "}]\n    services: [{name: app, port: 80}]\n"),
			expects: []expectation{{key: bad, typ: dag.ErrRoute, reason: "InvalidCondition", text: "spec.routes[0].conditions[0]: regex"}},
		},
		{
			name:    "generated/huge-relative-path-10MB",
			body:    proxyWith("  - conditions: [{prefix: " + huge + "}]\n    services: [{name: app, port: 80}]\n"),
			expects: []expectation{{key: bad, typ: dag.ErrRoute, reason: "InvalidCondition", text: "spec.routes[0].conditions[0].prefix"}},
		},
		{
			name:    "generated/5000-routes-same-conditions",
			body:    proxyWith(strings.Repeat("  - conditions: [{prefix: /same}]\n    services: [{name: app, port: 80}]\n", 5000)),
			expects: []expectation{{key: bad, typ: dag.ErrRoute, reason: "DuplicateConditions", text: "conditions: match the same requests as spec.routes[0]"}},
		},
		{
			name:    "generated/5000-routes-each-invalid",
			body:    proxyWith(strings.Repeat("  - conditions: [{prefix: /x}]\n    services: [{name: app, port: 0}]\n", 5000)),
			expects: []expectation{{key: bad, typ: dag.ErrService, reason: "InvalidPort", text: "spec.routes[0].services[0].port"}},
		},
	}
}

// TestBadInputStatusesAreBounded builds the large cases and checks that
// no status grows with the input: each message is at most
// maxConditionMessage bytes and no status has more than
// maxSubConditions errors, however many the input has.
func TestBadInputStatusesAreBounded(t *testing.T) {
	for _, c := range largeBadCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCase(t, dir, c.body)
			snap, _, err := dirsource.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res := dag.Build(snap, dag.Options{})
			t.Logf("built in %v", time.Since(start))
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
// an error, and it must build quickly and translate into valid resources.
func TestFiveThousandRoutes(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: big, namespace: shop}\nspec:\n  virtualhost: {fqdn: big.example.com}\n  routes:\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "  - conditions: [{prefix: /r%d}]\n    services: [{name: app, port: 80}]\n", i)
	}
	c := badCase{name: "5000-routes", body: []byte(b.String())}
	start := time.Now()
	runBadCase(t, c)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("5,000 routes took %v", d)
	}
}
