package pipeline

import (
	"fmt"
	"testing"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestPassAllIsPassByGroup: groups passing at once serve, withhold and
// report what they do passing one after another. Each group has good
// clusters, a cluster that fails validation, a route configuration that
// refers to it (withheld in turn) and one that does not; one good cluster
// is the same resource in every group, as a build's shared resources are.
// Run with -race, it also shows that the passes share nothing they write.
func TestPassAllIsPassByGroup(t *testing.T) {
	routeTo := func(name, cluster string) *xdsres.Resource {
		return mustEncode(t, &envoy_config_route_v3.RouteConfiguration{Name: name, VirtualHosts: []*envoy_config_route_v3.VirtualHost{{
			Name: "vh", Domains: []string{"*"},
			Routes: []*envoy_config_route_v3.Route{{
				Match:  &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}},
				Action: &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{ClusterSpecifier: &envoy_config_route_v3.RouteAction_Cluster{Cluster: cluster}}},
			}},
		}}})
	}
	shared := mustEncode(t, &envoy_config_cluster_v3.Cluster{Name: "shared"})
	groups := []xdsres.Group{xdsres.GroupEnvoy, xdsres.GroupGRPC, xdsres.GroupDNS}
	targets := make([]incremental.Targets, len(groups))
	for i, g := range groups {
		clusters := map[string]*xdsres.Resource{"shared": shared}
		for j := range 50 {
			name := fmt.Sprintf("%s-good-%d", g, j)
			clusters[name] = mustEncode(t, &envoy_config_cluster_v3.Cluster{Name: name})
		}
		bad := fmt.Sprintf("%s-bad", g)
		clusters[bad] = mustEncode(t, &envoy_config_cluster_v3.Cluster{Name: bad, ConnectTimeout: durationpb.New(-1)})
		targets[i] = incremental.Targets{
			resource.ClusterType: xdsres.SetOf(clusters),
			resource.RouteType: xdsres.SetOf(map[string]*xdsres.Resource{
				"to-bad":  routeTo("to-bad", bad),
				"to-good": routeTo("to-good", "shared"),
			}),
		}
	}

	alone := NewGate()
	alone.Begin()
	var wantFresh [][]Rejection
	for i, g := range groups {
		_, _, fresh := alone.Pass(g, targets[i], nil, true)
		wantFresh = append(wantFresh, fresh)
	}
	alone.End()

	atOnce := NewGate()
	atOnce.Begin()
	served, fresh := atOnce.PassAll(groups, targets, nil)
	atOnce.End()

	same := []cmp.Option{
		cmp.Comparer(func(a, b *xdsres.Resource) bool { return a == b }),
		cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() }),
	}
	for i, g := range groups {
		for _, typ := range []string{resource.ClusterType, resource.RouteType} {
			if diff := cmp.Diff(alone.served[g][typ].Map(), served[i][typ].Map(), same...); diff != "" {
				t.Errorf("%s %s served (-alone +at once):\n%s", g, typ, diff)
			}
		}
		if got := served[i][resource.RouteType].Get("to-bad"); got != nil {
			t.Errorf("%s serves the route configuration of a withheld cluster", g)
		}
		if len(fresh[i]) != 2 || fresh[i][0].Group != g || fresh[i][1].Group != g {
			t.Errorf("%s newly withheld %v, want its bad cluster and the route configuration using it", g, fresh[i])
		}
	}
	if diff := cmp.Diff(wantFresh, fresh, same...); diff != "" {
		t.Errorf("newly withheld (-alone +at once):\n%s", diff)
	}
	want, got := alone.Rejected(), atOnce.Rejected()
	if len(got) != 2*len(groups) {
		t.Fatalf("%d resources withheld, want a cluster and a route configuration in each of %d groups: %v", len(got), len(groups), got)
	}
	if diff := cmp.Diff(want, got, same...); diff != "" {
		t.Errorf("withheld (-alone +at once):\n%s", diff)
	}
}
