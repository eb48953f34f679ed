// Package mesh_test renders examples/mesh/app as `switchyard render --mesh`
// does and checks what each consumer group is served.
package mesh_test

import (
	"testing"

	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/golden"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestExampleRenders renders the example for every group: every object
// valid, every group's resources valid, and the DNS name of reviews
// weighted 70/30 between its two versions.
func TestExampleRenders(t *testing.T) {
	snap, problems, err := dirsource.Load("app")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("reading the example: %s", p)
	}
	for _, group := range xdsres.Groups {
		out, err := render.Run(snap, render.Options{DAG: dag.Options{Mesh: true}, Translator: translator.DefaultOptions(), Group: group})
		if err != nil {
			t.Fatal(err)
		}
		if !out.Valid() {
			t.Errorf("%s: not valid: %+v", group, out.Statuses)
		}
		res, err := golden.Resources(out.Resources)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range xdscheck.Check(group, res) {
			t.Errorf("%s: %v", group, err)
		}
		if group != xdsres.GroupDNS {
			continue
		}
		byService := map[string]uint32{}
		for _, m := range out.Resources[resource.EndpointType] {
			cla := m.(*envoy_config_endpoint_v3.ClusterLoadAssignment)
			if cla.ClusterName != "reviews.shop" {
				continue
			}
			for _, l := range cla.Endpoints {
				byService[l.Locality.SubZone] += l.LoadBalancingWeight.GetValue()
			}
		}
		v1, v2 := byService["shop/reviews-v1"], byService["shop/reviews-v2"]
		if v1 == 0 || v2 == 0 || v1*30 != v2*70 {
			t.Errorf("reviews.shop weights v1 %d, v2 %d: want 70:30", v1, v2)
		}
	}
}
