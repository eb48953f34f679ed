package admin

import (
	"encoding/json"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestDebugXDSFilters checks that ?type= and ?name= keep what they name,
// and that the streamed JSON is one valid document either way.
func TestDebugXDSFilters(t *testing.T) {
	cache := xdscache.New()
	var changes []xdsres.Change
	for _, name := range []string{"shop/a", "shop/b", "other/c"} {
		r, err := xdsres.NewResource(&envoy_config_cluster_v3.Cluster{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		changes = append(changes, xdsres.Change{TypeURL: resource.ClusterType, Name: name, Resource: r})
	}
	l, err := xdsres.NewResource(&envoy_config_listener_v3.Listener{Name: "ingress_http"})
	if err != nil {
		t.Fatal(err)
	}
	changes = append(changes, xdsres.Change{TypeURL: resource.ListenerType, Name: l.Name, Resource: l})
	if err := cache.Update(xdsres.GroupEnvoy, changes); err != nil {
		t.Fatal(err)
	}
	h := Handler(Config{Ready: func() bool { return true }, State: func() *State { return &State{} }, Cache: cache, Gatherer: prometheus.NewRegistry()})

	for _, tc := range []struct {
		query string
		want  map[string][]string
	}{
		{"", map[string][]string{resource.ClusterType: {"other/c", "shop/a", "shop/b"}, resource.ListenerType: {"ingress_http"}}},
		{"?type=Cluster", map[string][]string{resource.ClusterType: {"other/c", "shop/a", "shop/b"}}},
		{"?type=envoy.config.listener.v3.Listener", map[string][]string{resource.ListenerType: {"ingress_http"}}},
		{"?type=Cluster&name=shop/*", map[string][]string{resource.ClusterType: {"shop/a", "shop/b"}}},
		{"?name=shop/b", map[string][]string{resource.ClusterType: {"shop/b"}}},
		{"?name=nothing", map[string][]string{}},
	} {
		code, body := get(t, h, "/debug/xds"+tc.query)
		if code != 200 {
			t.Fatalf("/debug/xds%s = %d %q", tc.query, code, body)
		}
		var doc struct {
			Resources map[string][]struct{ Name string }
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("/debug/xds%s is not one JSON document: %v\n%s", tc.query, err, body)
		}
		got := map[string][]string{}
		for typ, rs := range doc.Resources {
			for _, r := range rs {
				got[typ] = append(got[typ], r.Name)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("/debug/xds%s (-want +got):\n%s", tc.query, diff)
		}
	}
	if code, _ := get(t, h, "/debug/xds?type=Secret&group=dns"); code != 400 {
		t.Errorf("a type the group does not serve = %d, want 400", code)
	}
}
