package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func TestExplainEndpoint(t *testing.T) {
	cache := xdscache.New()
	h := Handler(Config{Ready: func() bool { return true }, State: func() *State { return nil }, Cache: cache, Gatherer: prometheus.NewRegistry()})
	if code, body := get(t, h, "/api/explain"); code != 400 || !strings.Contains(body, "url is required") {
		t.Errorf("without url: %d %q", code, body)
	}
	if code, _ := get(t, h, "/api/explain?url=http://a/&header=nocolon"); code != 400 {
		t.Errorf("bad header: %d", code)
	}

	// With nothing served, a request finds no listener; the cache's own
	// listener, once there, is the one explained.
	code, body := get(t, h, "/api/explain?url="+url.QueryEscape("http://shop.example.com/"))
	if code != 200 {
		t.Fatalf("empty cache: %d %q", code, body)
	}
	var r explain.Result
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Decision.Kind != explain.KindRefused {
		t.Errorf("empty cache: %v, decision %+v", err, r.Decision)
	}
	l, err := xdsres.NewResource(&envoy_config_listener_v3.Listener{Name: "from-the-cache"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Update(xdsres.GroupEnvoy, []xdsres.Change{{TypeURL: resource.ListenerType, Name: l.Name, Resource: l}}); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, h, "/api/explain?url="+url.QueryEscape("http://shop.example.com/"))
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Listener == nil || r.Listener.Name != "from-the-cache" {
		t.Errorf("the explanation does not use the cache's listener: %v %s", err, body)
	}

	// POST takes the request as JSON and answers the same document.
	post := func(body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/explain", strings.NewReader(body)))
		return rec.Code, rec.Body.String()
	}
	code, posted := post(`{"url": "http://shop.example.com/"}`)
	if code != 200 || posted != body {
		t.Errorf("POST = %d, and differs from GET:\n%s\n%s", code, posted, body)
	}
	if code, _ := post(`{"url": "http://a/", "bogus": 1}`); code != 400 {
		t.Errorf("POST with an unknown field = %d, want 400", code)
	}
}
