package admin

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

func TestIndex(t *testing.T) {
	h := Handler(Config{Ready: func() bool { return true }, State: func() *State { return nil }, Cache: xdscache.New(), Gatherer: prometheus.NewRegistry()})
	code, body := get(t, h, "/api")
	if code != 200 {
		t.Fatalf("/api = %d %q", code, body)
	}
	// The event stream is listed too, but never ends, so it is not fetched.
	for _, p := range []string{"/", "/api", "/healthz", "/readyz", "/metrics", "/debug/dag", "/debug/xds", "/api/explain", "/debug/pprof/", "/api/objects", "/api/hosts", "/api/clients", "/console/"} {
		line := ""
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, p+" ") {
				line = l
			}
		}
		if line == "" || strings.TrimSpace(strings.TrimPrefix(line, p)) == "" {
			t.Errorf("the index does not describe %s:\n%s", p, body)
		}
		// Every path listed is served.
		if code, _ := get(t, h, p); code == 404 {
			t.Errorf("%s is listed but answers 404", p)
		}
	}
	if strings.Contains(body, "/debug/pprof/cmdline") {
		t.Errorf("the index lists pprof's sub-pages:\n%s", body)
	}
	if code, _ := get(t, h, "/no-such-page"); code != 404 {
		t.Errorf("/no-such-page = %d, want 404: the console answers / alone", code)
	}
}
