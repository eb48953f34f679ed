package admin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

func TestAdmin(t *testing.T) {
	ready := false
	var state *State
	cache := xdscache.New()
	var programmed map[objects.Key]xdsres.Programmed
	h := Handler(Config{
		Ready:      func() bool { return ready },
		State:      func() *State { return state },
		Cache:      cache,
		Gatherer:   prometheus.NewRegistry(),
		Programmed: func() map[objects.Key]xdsres.Programmed { return programmed },
	})
	if code, _ := get(t, h, "/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	if code, body := get(t, h, "/readyz"); code != 503 || !strings.Contains(body, "first build") {
		t.Fatalf("/readyz before the first build = %d %q", code, body)
	}
	ready = true
	if code, _ := get(t, h, "/readyz"); code != 200 {
		t.Fatalf("/readyz after = %d", code)
	}

	c := &dag.Cluster{Name: "shop/app/80/abc", Spec: dag.ClusterSpec{Backends: []dag.Backend{{Service: types.NamespacedName{Namespace: "shop", Name: "app"}, Port: 80, Weight: 1}}}}
	state = &State{DAG: &dag.DAG{Clusters: []*dag.Cluster{c}, DNSNames: []dag.DNSName{{Name: "app.shop", Cluster: c}}}}
	if code, body := get(t, h, "/debug/dag"); code != 200 || !strings.Contains(body, "digraph") || !strings.Contains(body, "DNS app.shop") {
		t.Fatalf("/debug/dag = %d %q", code, body)
	}

	r, err := xdsres.NewResource(&envoy_config_cluster_v3.Cluster{Name: "from-the-cache"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Update(xdsres.GroupDNS, []xdsres.Change{{TypeURL: resource.ClusterType, Name: r.Name, Resource: r}}); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, h, "/debug/xds?group=dns"); code != 200 || !strings.Contains(body, `"from-the-cache"`) {
		t.Fatalf("/debug/xds = %d %q", code, body)
	}
	if code, body := get(t, h, "/debug/xds?group=envoy"); code != 200 || strings.Contains(body, "from-the-cache") {
		t.Fatalf("the envoy group must not show the dns group's resources: %d %q", code, body)
	}
	if code, _ := get(t, h, "/debug/xds?group=bogus"); code != 400 {
		t.Fatalf("unknown group = %d", code)
	}
	if code, body := get(t, h, "/debug/xds?group=dns&format=yaml"); code != 200 || !strings.Contains(body, "name: from-the-cache") {
		t.Fatalf("yaml = %d %q", code, body)
	}

	if code, body := get(t, h, "/debug/programmed"); code != 200 || !strings.Contains(body, `"objects": []`) {
		t.Fatalf("/debug/programmed before any evaluation = %d %q", code, body)
	}
	proxy := objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: "app"}
	programmed = map[objects.Key]xdsres.Programmed{proxy: {Status: "False", Reason: xdsres.ReasonRejected, Message: "node \"e1\" rejected it"}}
	state = &State{Statuses: []*dag.Status{{Key: proxy, State: "valid"}}}
	code, body := get(t, h, "/debug/programmed")
	for _, want := range []string{`"kind": "HTTPProxy"`, `"namespace": "shop"`, `"status": "False"`, `"reason": "Rejected"`, `rejected it`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("/debug/programmed = %d, want %s in %s", code, want, body)
		}
	}
	if _, body := get(t, h, "/debug/xds?group=envoy"); !strings.Contains(body, `"reason":"Rejected"`) && !strings.Contains(body, `"reason": "Rejected"`) {
		t.Fatalf("/debug/xds statuses must carry the Programmed condition: %s", body)
	}
}
