package console_test

import (
	"flag"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/scalegen"
)

// scale runs the console against a generated set of that many proxies;
// 0 (the default) skips TestBrowserScale, which builds for a while.
var scale = flag.Int("scale", 0, "run TestBrowserScale against this many generated proxies (10000, say)")

// TestBrowserScale serves a generated set of -scale proxies and loads the
// console's pages and APIs, checking that each answers with one page of
// results whatever the total, and logging how long each took (the figures
// in site/console.md; a shared test machine's clock is no assertion).
func TestBrowserScale(t *testing.T) {
	if *scale == 0 {
		t.Skip("run with -scale=10000 to load the console at scale")
	}
	cfg := scalegen.Defaults()
	cfg.Proxies = *scale
	set, err := scalegen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := set.Write(dir); err != nil {
		t.Fatal(err)
	}
	base, _ := serveDir(t, dir)
	ctx := browser(t)

	var objs struct {
		Total int
		Items []struct{ Namespace, Name string }
	}
	timed(t, "GET /api/objects", func() { getJSON(t, base+"/api/objects", &objs) })
	if objs.Total < *scale || len(objs.Items) != 50 {
		t.Errorf("/api/objects: total %d, %d items; want at least %d in all and a page of 50", objs.Total, len(objs.Items), *scale)
	}
	ns := objs.Items[0].Namespace
	timed(t, "GET /api/objects?state=valid&namespace=<first>", func() {
		getJSON(t, base+"/api/objects?state=valid&namespace="+ns+"&offset=0", &objs)
	})
	var hosts struct {
		Total int
		Items []struct{ Name string }
	}
	timed(t, "GET /api/hosts?offset=5000", func() { getJSON(t, base+"/api/hosts?offset=5000", &hosts) })
	if len(hosts.Items) == 0 {
		t.Fatalf("/api/hosts?offset=5000: no hosts of %d", hosts.Total)
	}
	host := hosts.Items[0].Name
	var h struct {
		Routes []struct{ Clusters []struct{ Name string } }
	}
	timed(t, "GET /api/host", func() { getJSON(t, base+"/api/host?name="+host, &h) })
	var g struct{ Nodes []struct{ ID string } }
	timed(t, "GET /api/graph", func() { getJSON(t, base+"/api/graph?host="+host, &g) })
	if len(g.Nodes) < 3 {
		t.Errorf("the graph of %s has %d nodes", host, len(g.Nodes))
	}
	for _, page := range []string{"objects", "objects?state=invalid", "hosts?offset=5000", "host/" + host, "graph/" + host, "clients", "explain"} {
		timed(t, "browser #"+page, func() { open(t, ctx, base, page) })
	}
	if len(h.Routes) > 0 && len(h.Routes[len(h.Routes)-1].Clusters) > 0 {
		c := h.Routes[len(h.Routes)-1].Clusters[0].Name
		timed(t, "browser #cluster", func() {
			open(t, ctx, base, "cluster/"+c)
			visible(t, ctx, "#endpoints")
		})
	}
	screenshot(t, ctx, "console-scale-cluster")
	open(t, ctx, base, "objects")
	screenshot(t, ctx, "console-scale-objects")
}

func timed(t *testing.T, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	t.Logf("%-55s %v", what, time.Since(start).Round(time.Millisecond))
}
