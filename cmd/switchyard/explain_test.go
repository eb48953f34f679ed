package main

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-dev/switchyard/internal/admin"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

const quickstart = "../../examples/quickstart"

func TestExplainOffline(t *testing.T) {
	out, _, code := run(t, "explain", "--source", quickstart, "--url", "http://nope.example.com/")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (an explained 404 is not an error)", code)
	}
	for _, want := range []string{"=> not_found 404", `fix: no root HTTPProxy has spec.virtualhost.fqdn "nope.example.com"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, _, code = run(t, "explain", "--source", quickstart, "--url", "http://shop.example.com/", "-o", "json")
	if code != 0 {
		t.Fatalf("-o json: exit %d", code)
	}
	var r explain.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("-o json is not an explanation: %v\n%s", err, out)
	}
	if r.Decision.Kind != explain.KindRedirect || r.Decision.Location != "https://shop.example.com/" {
		t.Errorf("decision %+v, want the redirect to https", r.Decision)
	}
}

func TestExplainUsage(t *testing.T) {
	for _, args := range [][]string{
		{"explain"},
		{"explain", "--url", "http://a/", "-H", "no-colon"},
		{"explain", "--url", "http://a/", "-o", "yaml"},
		{"explain", "--url", "ftp://a/"},
		{"explain", "--url", "http://a/", "--group", "dns"},
		{"explain", "--url", "http://a/", "--source", quickstart, "--server", "http://127.0.0.1:1"},
	} {
		if _, _, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestExplainServer asks the admin endpoint over HTTP, from a cache filled
// with what the quickstart renders to, and checks that the answer is the
// one explaining offline gives.
func TestExplainServer(t *testing.T) {
	snap, _, err := dirsource.Load(quickstart)
	if err != nil {
		t.Fatal(err)
	}
	out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: "envoy"})
	if err != nil {
		t.Fatal(err)
	}
	cache := xdscache.New()
	byType := map[string][]*xdscache.Resource{}
	for url, msgs := range out.Resources {
		for _, m := range msgs {
			r, err := xdscache.NewResource(m)
			if err != nil {
				t.Fatal(err)
			}
			byType[url] = append(byType[url], r)
		}
	}
	if err := cache.Replace(xdscache.GroupEnvoy, byType); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(admin.Handler(admin.Config{
		Ready:    func() bool { return true },
		State:    func() *admin.State { return &admin.State{Statuses: out.Statuses} },
		Cache:    cache,
		Gatherer: prometheus.NewRegistry(),
	}))
	defer srv.Close()

	args := []string{"--url", "https://shop.example.com/api/cart", "-H", "X-Canary: true", "-o", "json"}
	remote, stderr, code := run(t, append([]string{"explain", "--server", srv.URL}, args...)...)
	if code != 0 {
		t.Fatalf("--server: exit %d: %s", code, stderr)
	}
	local, _, code := run(t, append([]string{"explain", "--source", quickstart}, args...)...)
	if code != 0 {
		t.Fatalf("--source: exit %d", code)
	}
	if remote != local {
		t.Errorf("the server's explanation differs from the offline one:\nserver:\n%s\noffline:\n%s", remote, local)
	}
	var r explain.Result
	if err := json.Unmarshal([]byte(remote), &r); err != nil {
		t.Fatal(err)
	}
	if r.Decision.Kind != explain.KindForward || len(r.Backends) == 0 {
		t.Errorf("decision %+v with %d backends, want a forward", r.Decision, len(r.Backends))
	}

	if _, stderr, code := run(t, "explain", "--server", srv.URL, "--url", "http://a/", "--group", "dns"); code != 2 || !strings.Contains(stderr, "unknown group") {
		t.Errorf("unknown group through the server: exit %d, %q", code, stderr)
	}
}
