package steering_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// scenarios are the guide's examples and what rendering each must show:
// the endpoints of the route's one load assignment, in wire order, as
// "p<priority> <sub_zone> <zone> <address> <health>", and the reasons of
// the warnings the objects carry.
var scenarios = []struct {
	dir        string
	drainZones []string // --drain-zone
	endpoints  []string
	warnings   []string
}{
	{
		dir: "canary",
		endpoints: []string{
			"p0 shop/storefront us-east-1a 10.1.1.10 HEALTHY",
			"p0 shop/storefront us-east-1a 10.1.1.11 HEALTHY",
			"p0 shop/storefront us-east-1b 10.1.2.10 HEALTHY",
			"p0 shop/storefront-canary us-east-1a 10.1.3.10 HEALTHY",
		},
	},
	{
		dir: "blue-green",
		endpoints: []string{
			"p0 shop/checkout-blue us-east-1a 10.2.1.10 HEALTHY",
			"p0 shop/checkout-blue us-east-1b 10.2.2.10 HEALTHY",
			"p1 shop/checkout-green us-east-1a 10.2.1.20 HEALTHY",
			"p1 shop/checkout-green us-east-1b 10.2.2.20 HEALTHY",
		},
	},
	{
		dir: "drain-node",
		endpoints: []string{
			"p0 shop/catalog us-east-1a 10.3.1.10 HEALTHY",
			"p0 shop/catalog us-east-1a 10.3.1.11 DRAINING", // on worker-2
			"p0 shop/catalog us-east-1a 10.3.1.12 DRAINING", // terminating
			"p0 shop/catalog us-east-1b 10.3.2.10 HEALTHY",
		},
	},
	{
		dir:        "drain-zone",
		drainZones: []string{"us-east-1b"},
		endpoints: []string{
			"p0 shop/payments us-east-1a 10.4.1.10 HEALTHY",
			"p0 shop/payments us-east-1a 10.4.1.11 HEALTHY",
			"p0 shop/payments us-east-1b 10.4.2.10 DRAINING",
			"p0 shop/payments us-east-1b 10.4.2.11 DRAINING",
			"p1 shop/payments-dr us-west-2a 10.5.1.10 HEALTHY",
			"p1 shop/payments-dr us-west-2b 10.5.2.10 HEALTHY",
		},
	},
	{
		dir: "drain-service",
		endpoints: []string{
			"p0 shop/search us-east-1a 10.6.1.10 DRAINING",
			"p0 shop/search us-east-1b 10.6.2.10 DRAINING",
			"p1 shop/search-v2 us-east-1a 10.6.1.20 HEALTHY",
			"p1 shop/search-v2 us-east-1b 10.6.2.20 HEALTHY",
		},
		warnings: []string{"ServiceDrained"},
	},
}

// TestScenarios renders every scenario as `switchyard render --source
// <dir> [--drain-zone ...]` would, for every consumer group: every
// document is read, every object is valid, every group's resources pass
// xdscheck, and each group's one load assignment holds the endpoints the
// guide describes.
func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.dir, func(t *testing.T) {
			snap, problems, err := dirsource.Load(sc.dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("%s", p)
			}
			res := dag.Build(snap, dag.Options{})
			checkStatuses(t, res.Statuses, sc.warnings)
			opts := translator.DefaultOptions()
			opts.DrainZones = sc.drainZones
			for _, group := range xdsres.Names() {
				r := translate(group, res.DAG, snap, opts)
				for _, err := range xdscheck.Check(xdsres.Group(group), r) {
					t.Errorf("%s: %v", group, err)
				}
				if len(r.Endpoints) != 1 {
					t.Fatalf("%s: %d load assignments, want the route's one", group, len(r.Endpoints))
				}
				got := endpointLines(r)
				if !slices.Equal(got, sc.endpoints) {
					t.Errorf("%s: endpoints\n%s\nwant\n%s", group, strings.Join(got, "\n"), strings.Join(sc.endpoints, "\n"))
				}
			}
		})
	}
}

// TestEveryScenarioIsTested keeps the table and the directories in step.
func TestEveryScenarioIsTested(t *testing.T) {
	dirs, err := dirsOf(".")
	if err != nil {
		t.Fatal(err)
	}
	var tested []string
	for _, sc := range scenarios {
		tested = append(tested, sc.dir)
	}
	slices.Sort(tested)
	if !slices.Equal(dirs, tested) {
		t.Errorf("scenario directories %v, tested %v", dirs, tested)
	}
}

func translate(group string, d *dag.DAG, snap *objects.Snapshot, opts translator.Options) *translator.Resources {
	switch group {
	case "grpc":
		return translator.GRPC(d, snap, opts)
	case "dns":
		return translator.DNS(d, snap, opts)
	}
	return translator.Envoy(d, snap, opts)
}

// checkStatuses requires every object valid, with exactly the warnings
// listed (by reason).
func checkStatuses(t *testing.T, statuses []*dag.Status, warnings []string) {
	t.Helper()
	var got []string
	for _, st := range statuses {
		if st.State != switchyardv1.StatusValid {
			t.Errorf("%s is %s: %s", st.Key, st.State, st.Description)
		}
		for _, w := range st.Warnings {
			got = append(got, w.Reason)
		}
	}
	if !slices.Equal(got, warnings) {
		t.Errorf("warnings %v, want %v", got, warnings)
	}
}

// endpointLines lists the endpoints of r's load assignments in wire
// order.
func endpointLines(r *translator.Resources) []string {
	var out []string
	for _, cla := range r.Endpoints {
		for _, l := range cla.GetEndpoints() {
			for _, ep := range l.GetLbEndpoints() {
				out = append(out, fmt.Sprintf("p%d %s %s %s %s", l.GetPriority(), l.GetLocality().GetSubZone(), l.GetLocality().GetZone(),
					ep.GetEndpoint().GetAddress().GetSocketAddress().GetAddress(), ep.GetHealthStatus()))
			}
		}
	}
	return out
}

// dirsOf lists the directories in dir, sorted.
func dirsOf(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
