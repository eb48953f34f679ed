package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserBrokenServiceAndExplain is the console's promise: on the
// quickstart, after a Service name is broken, a person finds the broken
// route (red, naming its field) on the objects, host and graph pages, and
// explain says why a request fails.
func TestBrowserBrokenServiceAndExplain(t *testing.T) {
	ctx := browser(t)
	dir, base, _ := quickstart(t)

	// Before the break, every object is valid.
	open(t, ctx, base, "objects")
	if s := text(t, ctx, `tr[data-object="HTTPProxy/shop/storefront"] .state`); s != "valid" {
		t.Fatalf("before the break, shop/storefront shows %q, want valid", s)
	}

	edit(t, dir, "10-shop.yaml", "    - name: api\n      port: 8080", "    - name: apii\n      port: 8080")
	waitFor(t, time.Minute, "shop/storefront to be invalid", func() bool {
		var list struct {
			Items []struct{ Name, State string }
		}
		getJSON(t, base+"/api/objects?state=invalid", &list)
		return len(list.Items) == 1 && list.Items[0].Name == "storefront"
	})

	// The objects page, filtered to what is wrong, shows the error.
	open(t, ctx, base, "objects?state=invalid")
	row := `tr[data-object="HTTPProxy/shop/storefront"]`
	if s := text(t, ctx, row); !strings.Contains(s, "spec.routes[1].services[0]: Service shop/apii not found") {
		t.Errorf("the objects page shows %q for shop/storefront, want the field and the problem", s)
	}
	if c := color(t, ctx, row); c != red {
		t.Errorf("the invalid object's row is %s, want red %s", c, red)
	}
	screenshot(t, ctx, "console-objects")

	// The hosts page, filtered to broken hosts, leads there.
	open(t, ctx, base, "hosts?broken=true")
	if s := text(t, ctx, "#hosts tr.broken"); !strings.Contains(s, "shop.example.com") {
		t.Errorf("the broken hosts are %q, want shop.example.com", s)
	}

	// The host page: the broken route is red and names its field.
	open(t, ctx, base, "host/shop.example.com")
	broken := `#routes tr.broken[data-route="api"]`
	if s := text(t, ctx, broken+" .field"); s != "spec.routes[1].services[0]" {
		t.Errorf("the broken route names field %q, want spec.routes[1].services[0]", s)
	}
	if c := color(t, ctx, broken); c != red {
		t.Errorf("the broken route is %s, want red %s", c, red)
	}
	order, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#routes tr[data-route]")].map(r => r.dataset.route)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "healthz,api,web" {
		t.Errorf("routes shown in order %v, want Envoy's match order healthz,api,web", order)
	}
	screenshot(t, ctx, "console-host")

	// The graph, drawn by Cytoscape, marks the route and lists why.
	open(t, ctx, base, "graph/shop.example.com")
	visible(t, ctx, `#graph[data-broken] canvas`)
	brokenNodes, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#graph"), "data-broken"))
	if err != nil {
		t.Fatal(err)
	}
	if brokenNodes.Value != "1" {
		t.Errorf("the graph draws %s broken nodes, want 1 (the route)", brokenNodes.Value)
	}
	if s := text(t, ctx, "#graph-problems li.broken"); !strings.Contains(s, "spec.routes[1].services[0]") {
		t.Errorf("the graph's list of problems says %q, want the field", s)
	}
	screenshot(t, ctx, "console-graph")

	// Explain: the broken route answers 503 and names what to fix; a host
	// nobody serves answers 404 and says so.
	explain(t, ctx, base, "https://shop.example.com/api/cart", "503", "spec.routes[1]")
	screenshot(t, ctx, "console-explain")
	explain(t, ctx, base, "http://nope.example.com/", "404", "nope.example.com")
}

// explain fills in the explain form, submits it and checks the answer's
// status and that its reason or fix mentions want.
func explain(t *testing.T, ctx context.Context, base, url, status, want string) {
	t.Helper()
	open(t, ctx, base, "explain")
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("url"), url),
		chromedp.Click(chromedp.ID("explain-submit"))); err != nil {
		t.Fatal(err)
	}
	visible(t, ctx, `#explain-result[data-url=`+jsString(url)+`] #explain-status`)
	if s := text(t, ctx, "#explain-status"); !strings.HasPrefix(s, status) {
		t.Errorf("explain %s: status %q, want %s", url, s, status)
	}
	if s := text(t, ctx, "#explain-result"); !strings.Contains(s, want) {
		t.Errorf("explain %s says %q, want it to mention %q", url, s, want)
	}
}
