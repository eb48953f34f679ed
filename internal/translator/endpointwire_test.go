package translator_test

import (
	"fmt"
	"path/filepath"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/golden"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestAssignmentEncodingGenerated checks the direct encoding of every load
// assignment of generated builds against the messages' encoding (see
// CheckAssignmentEncoding): several zones, terminating endpoints (every
// tenth), weights, named ports; then the same objects with every third
// slice turned IPv6 and every fifth selecting the pods of the slice
// before it, so that gRPC's assignments drop duplicates.
func TestAssignmentEncodingGenerated(t *testing.T) {
	for _, shape := range []struct{ services, endpoints, zones int }{{1, 1, 1}, {3, 3, 2}, {2, 10, 3}, {4, 7, 5}} {
		cfg := scalegen.Defaults()
		cfg.Proxies, cfg.Included = 40, 4
		cfg.RoutesPerProxy, cfg.ServicesPerRoute = 2, shape.services
		cfg.EndpointsPerService, cfg.Zones = shape.endpoints, shape.zones
		set, err := scalegen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("services=%d,endpoints=%d,zones=%d", shape.services, shape.endpoints, shape.zones)
		t.Run(name, func(t *testing.T) { checkAssignments(t, set.Snapshot(), dag.Options{}, translator.DefaultOptions()) })
		t.Run(name+",ipv6,shared", func(t *testing.T) {
			checkAssignments(t, mixedSlices(set).Snapshot(), dag.Options{}, translator.DefaultOptions())
		})
	}
}

// mixedSlices is set with every third EndpointSlice's addresses IPv6 and
// every fifth's the addresses of the slice before it.
func mixedSlices(set *scalegen.Set) *scalegen.Set {
	out := &scalegen.Set{Objects: make([]runtime.Object, 0, len(set.Objects))}
	var prev *discoveryv1.EndpointSlice
	n := 0
	for _, o := range set.Objects {
		es, ok := o.(*discoveryv1.EndpointSlice)
		if !ok {
			out.Objects = append(out.Objects, o)
			continue
		}
		es = es.DeepCopy()
		n++
		switch {
		case n%5 == 0 && prev != nil:
			for i := range es.Endpoints {
				es.Endpoints[i].Addresses = prev.Endpoints[i%len(prev.Endpoints)].Addresses
			}
			es.AddressType = prev.AddressType
		case n%3 == 0:
			es.AddressType = discoveryv1.AddressTypeIPv6
			for i := range es.Endpoints {
				es.Endpoints[i].Addresses = []string{fmt.Sprintf("fd00::%x:%x", n, i)}
			}
		}
		prev = es
		out.Objects = append(out.Objects, es)
	}
	return out
}

// TestAssignmentEncodingGolden checks the direct encoding of every load
// assignment of every golden case, with the case's options.
func TestAssignmentEncodingGolden(t *testing.T) {
	cases, _, err := golden.Dirs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c, err := golden.Load(dir, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			checkAssignments(t, c.Snapshot, c.DAG, c.Translator)
		})
	}
}

func checkAssignments(t *testing.T, snap *objects.Snapshot, dopts dag.Options, opts translator.Options) {
	t.Helper()
	d := dag.Build(snap, dopts).DAG
	var buf translator.AssignmentBuffers
	n := 0
	for _, c := range d.Clusters {
		if c == nil || !translator.ServesEndpoints(&c.Spec) {
			continue
		}
		n++
		if err := translator.CheckAssignmentEncoding(&buf, c.Name, &c.Spec, snap, opts); err != nil {
			t.Error(err)
		}
	}
	for _, named := range d.DNSNames {
		if named.Cluster != nil && translator.ServesEndpoints(&named.Cluster.Spec) {
			n++
			if err := translator.CheckAssignmentEncoding(&buf, named.Name, &named.Cluster.Spec, snap, opts); err != nil {
				t.Error(err)
			}
		}
	}
	t.Logf("%d load assignments", n)
}

// BenchmarkLoadAssignments makes every load assignment of 1,000 proxies
// of the shape (3 weighted Services per route, 3 endpoints each
// in 2 zones) as the engine does (wire: Assignment.Encode in reused
// buffers) and as it used to (message: LoadAssignment, then
// xdsres.Marshal).
func BenchmarkLoadAssignments(b *testing.B) {
	cfg := scalegen.Defaults()
	cfg.Proxies, cfg.Included = 1100, 100
	cfg.RoutesPerProxy, cfg.ServicesPerRoute = 2, 3
	cfg.EndpointsPerService, cfg.Zones = 3, 2
	cfg.TLSFraction = 0.5
	set, err := scalegen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	snap := set.Snapshot()
	opts := translator.DefaultOptions()
	var clusters []*dag.Cluster
	for _, c := range dag.Build(snap, dag.Options{}).DAG.Clusters {
		if c != nil && translator.ServesEndpoints(&c.Spec) {
			clusters = append(clusters, c)
		}
	}
	b.Run("wire", func(b *testing.B) {
		var buf translator.AssignmentBuffers
		for b.Loop() {
			for _, c := range clusters {
				if _, err := buf.Of(&c.Spec, snap, opts).Encode(c.Name); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(clusters)), "assignments")
	})
	b.Run("message", func(b *testing.B) {
		for b.Loop() {
			for _, c := range clusters {
				if _, err := xdsres.Marshal(translator.LoadAssignment(c.Name, &c.Spec, snap, opts)); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(clusters)), "assignments")
	})
}
