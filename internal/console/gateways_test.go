package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchyard-dev/switchyard/examples"
	"github.com/switchyard-dev/switchyard/internal/server"
)

// edgeProxy is an HTTPProxy of gateway edge, beside the quickstart's.
const edgeProxy = `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: edge, namespace: shop}
spec:
  ingressClassName: edge
  virtualhost: {fqdn: edge.example.com}
  routes: [{services: [{name: api, port: 8080}]}]
`

// TestBrowserGatewaySelector: with a second gateway served, the header
// offers both gateways, and choosing one redraws the page from that
// gateway's hosts alone.
func TestBrowserGatewaySelector(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	if err := examples.WriteQuickstart(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "90-edge.yaml"), []byte(edgeProxy), 0o644); err != nil {
		t.Fatal(err)
	}
	base, _ := serveDirWith(t, dir, func(c *server.Config) { c.Pipeline.Gateways = []string{"edge"} })

	open(t, ctx, base, "hosts")
	if s := text(t, ctx, "#gateway"); !strings.Contains(s, "default") || !strings.Contains(s, "edge") {
		t.Fatalf("the gateway selector offers %q, want the default gateway and edge", s)
	}
	if s := text(t, ctx, "#hosts"); !strings.Contains(s, "shop.example.com") || strings.Contains(s, "edge.example.com") {
		t.Fatalf("the default gateway's hosts are %q, want shop.example.com and not edge.example.com", s)
	}
	choose := `const s = document.getElementById("gateway"); s.value = "edge"; s.dispatchEvent(new Event("change")); true`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](choose)); err != nil {
		t.Fatal(err)
	}
	visible(t, ctx, `#page[data-ready="hosts"]`)
	if s := text(t, ctx, "#hosts"); !strings.Contains(s, "edge.example.com") || strings.Contains(s, "shop.example.com") {
		t.Errorf("gateway edge's hosts are %q, want edge.example.com alone", s)
	}
}
