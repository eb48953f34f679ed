package dag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestJoinStatusMatchesAssemble rebuilds, from the units' own statuses,
// what Assemble reports for a team proxy two roots include (each finding
// the same missing Service) and for a root that loses its host name.
func TestJoinStatusMatchesAssemble(t *testing.T) {
	team := proxy("team/app", switchyardv1.HTTPProxySpec{Routes: []switchyardv1.Route{route(svc("missing", 80))}})
	include := func(p *switchyardv1.HTTPProxy) *switchyardv1.HTTPProxy {
		p.Spec.Includes = []switchyardv1.Include{{Name: "app", Namespace: "team", Conditions: []switchyardv1.MatchCondition{{Prefix: "/app"}}}}
		return p
	}
	a := include(root("web/a", "www.example.com"))
	b := include(root("web/b", "www.example.com"))
	snap := snapshot(t, a, b, team)
	res := Build(snap, Options{})
	ra, rb := BuildRoot(snap, Options{}, a, Extensions{}), BuildRoot(snap, Options{}, b, Extensions{})
	if !ClaimsBefore(ra, rb) {
		t.Fatal("equal creation times: the claim goes by namespace and name")
	}
	teamKey := objects.Key{Kind: objects.KindHTTPProxy, Namespace: "team", Name: "app"}
	// b loses www.example.com, so only a's view of the team proxy counts.
	got := JoinStatus(teamKey, []*Status{ra.Statuses[teamKey]}, nil, nil)
	if diff := cmp.Diff(statusOf(t, res, objects.KindHTTPProxy, "team/app"), got); diff != "" {
		t.Errorf("team proxy (-Assemble +JoinStatus):\n%s", diff)
	}
	bKey := objects.Key{Kind: objects.KindHTTPProxy, Namespace: "web", Name: "b"}
	got = JoinStatus(bKey, []*Status{rb.Statuses[bKey]}, []switchyardv1.SubCondition{DuplicateFQDN("www.example.com", types.NamespacedName{Namespace: "web", Name: "a"})}, nil)
	if diff := cmp.Diff(statusOf(t, res, objects.KindHTTPProxy, "web/b"), got); diff != "" {
		t.Errorf("losing root (-Assemble +JoinStatus):\n%s", diff)
	}
}
