package xdscache

import (
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func TestWildcardFor(t *testing.T) {
	for name, want := range map[string]string{
		"api.example.com":     "*.example.com",
		"api.example.com:443": "*.example.com:443",
		"a.b.example.com":     "*.b.example.com",
		"example.com":         "",
		"*.example.com":       "",
		"localhost:80":        "",
	} {
		got, ok := wildcardFor(name)
		if got != want || ok != (want != "") {
			t.Errorf("%q: got %q, %v; want %q", name, got, ok, want)
		}
	}
}

// TestGRPCListenerAlias: a gRPC client asking for a name only a wildcard
// listener serves gets that listener under the name it asked for; an
// exact listener wins; the alias follows the wildcard's changes and goes
// with it.
func TestGRPCListenerAlias(t *testing.T) {
	c := New()
	listener := func(name, stat string) xdsres.Change {
		r, err := xdsres.NewResource(&envoy_config_listener_v3.Listener{Name: name, StatPrefix: stat})
		if err != nil {
			t.Fatal(err)
		}
		return xdsres.Change{TypeURL: resource.ListenerType, Name: name, Resource: r}
	}
	ts := c.groups[xdsres.GroupGRPC][resource.ListenerType]
	get := func(name string) *envoy_config_listener_v3.Listener {
		t.Helper()
		r, ok := ts.lookup(name)
		if !ok {
			return nil
		}
		return r.Decoded().(*envoy_config_listener_v3.Listener)
	}
	if err := c.Update(xdsres.GroupGRPC, []xdsres.Change{listener("*.example.com", "v1")}); err != nil {
		t.Fatal(err)
	}
	if l := get("api.example.com"); l.GetName() != "api.example.com" || l.GetStatPrefix() != "v1" {
		t.Fatalf("alias: %v", l)
	}
	if l := get("a.b.example.com"); l != nil {
		t.Errorf("a wildcard serves one label only, got %v", l)
	}
	if err := c.Update(xdsres.GroupGRPC, []xdsres.Change{listener("*.example.com", "v2"), listener("www.example.com", "exact")}); err != nil {
		t.Fatal(err)
	}
	if l := get("api.example.com"); l.GetStatPrefix() != "v2" {
		t.Errorf("the alias kept the old wildcard: %v", l)
	}
	if l := get("www.example.com"); l.GetStatPrefix() != "exact" {
		t.Errorf("the exact listener lost to the wildcard: %v", l)
	}
	if err := c.Update(xdsres.GroupGRPC, []xdsres.Change{{TypeURL: resource.ListenerType, Name: "*.example.com"}}); err != nil {
		t.Fatal(err)
	}
	if l := get("api.example.com"); l != nil {
		t.Errorf("the alias outlived its wildcard: %v", l)
	}
	if _, ok := c.groups[xdsres.GroupEnvoy][resource.ListenerType].lookup("api.example.com"); ok {
		t.Error("the envoy group has aliases")
	}
}
