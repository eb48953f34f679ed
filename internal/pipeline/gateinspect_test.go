package pipeline

import (
	"bytes"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestInspectionAsEncodedIsTheGates builds a generated set (TLS, ext_authz,
// JWT, weighted services) with an engine that records what it inspects as it encodes,
// and compares every resource's recorded inspection with the gate's own
// from its decoded encoding: same error, same references in the same
// order. The parallel phases make nearly all of them, load assignments
// aside.
func TestInspectionAsEncodedIsTheGates(t *testing.T) {
	set, err := scalegen.Generate(scalegen.DirectoryShape(200))
	if err != nil {
		t.Fatal(err)
	}
	p := New(xdscache.New(), Config{Translator: translator.DefaultOptions()})
	var mu sync.Mutex
	made := map[*xdsres.Resource]*inspection{}
	p.engine = incremental.New(p.snap, incremental.Config{Translator: translator.DefaultOptions(), Inspect: func(m proto.Message, r *xdsres.Resource) {
		in := inspectEncoded(m, r)
		mu.Lock()
		made[r] = in
		mu.Unlock()
		p.gate.record(m, r)
	}})
	if _, err := p.Apply(set.Changes()); err != nil {
		t.Fatal(err)
	}
	if p.gate.early != nil || p.gate.inspected != nil {
		t.Errorf("the gate keeps %d inspections made as resources were encoded, and %d of its own, after the build", len(p.gate.early), len(p.gate.inspected))
	}
	distinct := map[*xdsres.Resource]bool{}
	missing := map[string]int{}
	for _, g := range groups {
		for typ, byName := range p.engine.Targets(g.name) {
			if typ == resource.EndpointType {
				// Encoded straight from their data (translator.Assignment),
				// with no message to inspect: the gate decodes them.
				continue
			}
			for name, r := range byName.All() {
				distinct[r] = true
				got, ok := made[r]
				if !ok {
					missing[kindName(typ)]++
					continue
				}
				if got == nil {
					t.Errorf("%s %s %q: no inspection made as it was encoded", g.name, kindName(typ), name)
					continue
				}
				want := inspect(r, typ, name)
				if errText(got.err) != errText(want.err) || !slices.Equal(got.refs, want.refs) {
					t.Errorf("%s %s %q: inspected as encoded\n%q %v\nfrom its encoding\n%q %v", g.name, kindName(typ), name, errText(got.err), got.refs, errText(want.err), want.refs)
				}
			}
		}
	}
	// Secrets are encoded one by one, and the HTTPS listener spliced
	// from its hosts' chains: the gate decodes those.
	if len(made) < len(distinct)*9/10 {
		t.Errorf("%d of %d resources were inspected as they were encoded (not: %v); want nine in ten", len(made), len(distinct), missing)
	}
}

// TestGateInspectsWhatHasNoInspection passes, as one build, a cluster
// inspected as it was encoded and another encoded without, both invalid,
// and one whose encoding does not decode: the gate withholds the first
// two with the same problem and the third as not decoding, and serves a
// valid one whose inspection says it is valid.
func TestGateInspectsWhatHasNoInspection(t *testing.T) {
	cluster := func(name string, timeout int64) *envoy_config_cluster_v3.Cluster {
		return &envoy_config_cluster_v3.Cluster{
			Name:                 name,
			ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_STATIC},
			ConnectTimeout:       durationpb.New(time.Duration(timeout) * time.Second),
		}
	}
	gt := NewGate()
	enc := func(m *envoy_config_cluster_v3.Cluster, inspected bool) *xdsres.Resource {
		r, err := xdsres.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if inspected {
			gt.record(m, r)
			if _, ok := gt.early[r]; !ok {
				t.Fatal("no inspection of a cluster that decodes")
			}
		}
		return r
	}
	// The fast encoder lets a string that is not UTF-8 through, and
	// clients' decoders refuse it: no inspection is made as such a
	// resource is encoded, and the gate finds it does not decode.
	notUTF8 := cluster("utf8X", 1)
	b, err := proto.Marshal(notUTF8)
	if err != nil {
		t.Fatal(err)
	}
	notUTF8.Name = "utf8\xff"
	broken := xdsres.NewCompactResource("utf8", resource.ClusterType, bytes.Replace(b, []byte("utf8X"), []byte("utf8\xff"), 1))
	if in := inspectEncoded(notUTF8, broken); in != nil {
		t.Fatalf("an inspection of a resource that does not decode: %v", in)
	}
	target := incremental.Targets{resource.ClusterType: xdsres.SetOf(map[string]*xdsres.Resource{
		"with":  enc(cluster("with", -1), true),
		"none":  enc(cluster("none", -1), false),
		"valid": enc(cluster("valid", 1), true),
		"utf8":  broken,
	})}
	gt.Begin()
	served, _, fresh := gt.Pass(xdsres.GroupEnvoy, target, nil, true)
	gt.End()
	if served[resource.ClusterType].Get("valid") == nil || served[resource.ClusterType].Len() != 1 {
		t.Fatalf("want the valid cluster alone served, got %v", served[resource.ClusterType])
	}
	errs := map[string]string{}
	for _, rj := range fresh {
		errs[rj.Name] = errText(rj.Err)
	}
	if errs["with"] == "" || errs["none"] != errs["with"] {
		t.Fatalf("both invalid clusters must be withheld for the same problem: %q", errs)
	}
	if want := `Cluster "utf8" does not decode`; errs["utf8"] != want {
		t.Fatalf("the cluster that is not UTF-8 must be withheld as %q, got %q", want, errs["utf8"])
	}
}

// TestGateTakesRecordedInspections records, for a valid cluster, an
// inspection that says it is not, and checks that the gate's pass goes by
// what was recorded (it does not inspect the cluster again), and that the
// recorded inspections are forgotten when the build ends.
func TestGateTakesRecordedInspections(t *testing.T) {
	m := &envoy_config_cluster_v3.Cluster{
		Name:                 "c",
		ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(time.Second),
	}
	r, err := xdsres.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	gt := NewGate()
	gt.record(m, r)
	if in, ok := gt.early[r]; !ok || in.err != nil {
		t.Fatalf("recorded %v, %v for a valid cluster", in, ok)
	}
	gt.early[r] = inspection{err: errors.New("as recorded")}
	gt.Begin()
	_, _, fresh := gt.Pass(xdsres.GroupEnvoy, incremental.Targets{resource.ClusterType: xdsres.SetOf(map[string]*xdsres.Resource{"c": r})}, nil, true)
	gt.End()
	if len(fresh) != 1 || errText(fresh[0].Err) != "as recorded" {
		t.Fatalf("withheld %v, want the cluster withheld as recorded", fresh)
	}
	if gt.early != nil || gt.inspected != nil {
		t.Error("the gate keeps inspections after the build")
	}
}

// TestLoadAssignmentsScannedAreInspected gives the gate's inspection of
// every load assignment of a generated build, most of which the byte
// scan finds clean and are not decoded, and of the same with bad ports
// and addresses, and compares each with the inspection of the decoded
// message: same error, same references.
func TestLoadAssignmentsScannedAreInspected(t *testing.T) {
	p := builtDirectoryShape(t, 100)
	var all []*xdsres.Resource
	for _, g := range groups {
		for _, r := range p.engine.Targets(g.name)[resource.EndpointType].All() {
			all = append(all, r)
			cla := r.Decoded().(*envoy_config_endpoint_v3.ClusterLoadAssignment)
			for _, bad := range []func(*envoy_config_core_v3.SocketAddress){
				func(sa *envoy_config_core_v3.SocketAddress) {
					sa.PortSpecifier = &envoy_config_core_v3.SocketAddress_PortValue{}
				},
				func(sa *envoy_config_core_v3.SocketAddress) { sa.Address = "not-an-ip" },
				func(sa *envoy_config_core_v3.SocketAddress) {
					sa.PortSpecifier = &envoy_config_core_v3.SocketAddress_PortValue{PortValue: 65536}
				},
			} {
				m := proto.Clone(cla).(*envoy_config_endpoint_v3.ClusterLoadAssignment)
				bad(m.GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress())
				b, err := xdsres.Encode(m)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, b)
			}
		}
	}
	scanned := 0
	for _, r := range all {
		if xdscheck.CleanAssignment(r.Any.GetValue()) {
			scanned++
		}
		got, want := inspect(r, resource.EndpointType, r.Name), inspectDecoded(r, resource.EndpointType, r.Name)
		if errText(got.err) != errText(want.err) || !slices.Equal(got.refs, want.refs) {
			t.Errorf("%q: inspected\n%q %v\ndecoded\n%q %v", r.Name, errText(got.err), got.refs, errText(want.err), want.refs)
		}
	}
	if scanned != len(all)/4 {
		t.Errorf("%d of %d load assignments were found clean by the byte scan; want the %d the build made", scanned, len(all), len(all)/4)
	}
}

// TestFullBuildForgetsCleanAnys checks that a first build leaves no clean
// Anys remembered: their memo is worth megabytes at scale and serves the
// build's own repeats. TestIncrementalCacheEqualsFullBuild checks that
// later builds, which remember what they inspect again, serve the same.
func TestFullBuildForgetsCleanAnys(t *testing.T) {
	p := builtDirectoryShape(t, 40)
	if n := xdscheck.CleanHeld(); n != 0 {
		t.Errorf("after the first build the memo of clean Anys holds %d bytes", n)
	}
	if len(p.gate.Rejected()) != 0 {
		t.Fatalf("the build withheld %v", p.gate.Rejected())
	}
}

// builtDirectoryShape returns a pipeline with a cache that has built
// scalegen's directory shape at the given number of roots.
func builtDirectoryShape(tb testing.TB, roots int) *Pipeline {
	tb.Helper()
	set, err := scalegen.Generate(scalegen.DirectoryShape(roots))
	if err != nil {
		tb.Fatal(err)
	}
	p := New(xdscache.New(), Config{Translator: translator.DefaultOptions()})
	if _, err := p.Apply(set.Changes()); err != nil {
		tb.Fatal(err)
	}
	return p
}
