package xdscheck_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// translate renders one golden case of the translator for every group.
func translate(t *testing.T, name string) map[string]*translator.Resources {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "translator", "testdata", name, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "input.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	snap, _, err := dirsource.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	d := dag.Build(snap, dag.Options{}).DAG
	o := translator.DefaultOptions()
	return map[string]*translator.Resources{
		"envoy": translator.Envoy(d, snap, o),
		"grpc":  translator.GRPC(d, snap, o),
		"dns":   translator.DNS(d, snap, o),
	}
}

// TestCheckFindsBrokenReferences removes one resource of each kind that
// others refer to and expects Check to say so.
func TestCheckFindsBrokenReferences(t *testing.T) {
	cases := []struct {
		name, group string
		drop        func(r *translator.Resources)
		want        string
	}{
		{"cluster a route uses", "envoy", func(r *translator.Resources) { r.Clusters = r.Clusters[1:]; r.Endpoints = r.Endpoints[1:] }, "refers to cluster"},
		{"load assignment of a cluster", "envoy", func(r *translator.Resources) { r.Endpoints = r.Endpoints[1:] }, "consistency"},
		{"route configuration of a scope", "envoy", func(r *translator.Resources) { r.Routes = r.Routes[1:] }, "consistency"},
		{"secret of a TLS context", "envoy", func(r *translator.Resources) { r.Secrets = nil }, "refers to secret"},
		{"route configuration of an api_listener", "grpc", func(r *translator.Resources) { r.Routes = nil }, "refers to route configuration"},
		{"scope key used twice", "envoy", func(r *translator.Resources) { r.ScopedRoutes = append(r.ScopedRoutes, r.ScopedRoutes[0]) }, "share the key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := translate(t, "tls-delegated-secret")[tc.group]
			if errs := xdscheck.Check(xdsres.Group(tc.group), r); len(errs) > 0 {
				t.Fatalf("the case is broken before dropping anything: %v", errs)
			}
			tc.drop(r)
			errs := xdscheck.Check(xdsres.Group(tc.group), r)
			for _, err := range errs {
				if strings.Contains(err.Error(), tc.want) {
					return
				}
			}
			t.Fatalf("Check found %v, nothing saying %q", errs, tc.want)
		})
	}
}
