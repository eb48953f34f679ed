package translator_test

import (
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/golden"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// TestSharedShapes checks, on every golden case, that the helpers which
// derive one group's resource from another's (so that an incremental build
// computes and encodes it once) give what the group's own builder gives.
func TestSharedShapes(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	opts := translator.DefaultOptions()
	for _, input := range dirs {
		dir := filepath.Dir(input)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c, err := golden.Load(dir, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			snap := c.Snapshot
			d := dag.Build(snap, c.DAG).DAG
			for _, c := range d.Clusters {
				envoy := translator.Cluster(c, opts)
				if got, want := translator.GRPCClusterOf(envoy, c, opts), translator.GRPCCluster(c, opts); !proto.Equal(got, want) {
					t.Errorf("GRPCClusterOf(%s) differs from GRPCCluster", c.Name)
				}
				cla := translator.LoadAssignment(c.Name, &c.Spec, snap, opts)
				before := proto.Clone(cla)
				if got, want := translator.GRPCLoadAssignmentOf(cla), translator.GRPCLoadAssignment(c.Name, &c.Spec, snap, opts); !proto.Equal(got, want) {
					t.Errorf("GRPCLoadAssignmentOf(%s) differs from GRPCLoadAssignment", c.Name)
				}
				if !proto.Equal(cla, before) {
					t.Errorf("GRPCLoadAssignmentOf(%s) changed Envoy's assignment", c.Name)
				}
			}
			for _, n := range d.DNSNames {
				cla := translator.LoadAssignment(n.Cluster.Name, &n.Cluster.Spec, snap, opts)
				if got, want := translator.LoadAssignmentAs(cla, n.Name), translator.LoadAssignment(n.Name, &n.Cluster.Spec, snap, opts); !proto.Equal(got, want) {
					t.Errorf("LoadAssignmentAs(%s) differs from LoadAssignment", n.Name)
				}
			}
			var chains int
			fallback := false
			for _, svh := range d.SecureVirtualHosts {
				if translator.HTTPSFilterChain(svh) != nil {
					chains++
				}
				fallback = fallback || translator.FallbackVirtualHost(svh) != nil
			}
			if fallback {
				chains++
			}
			if l := translator.HTTPSListener(d.SecureVirtualHosts, opts); (l == nil) != (chains == 0) || (l != nil && len(l.FilterChains) != chains) {
				t.Errorf("the HTTPS listener has %d filter chains, want one per servable host and the fallback chain when a host uses it (%d)", len(l.GetFilterChains()), chains)
			}
		})
	}
}
