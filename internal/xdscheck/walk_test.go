package xdscheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// visitEverything is what visit shows, found by walking every populated
// field: what visit's plans leave out must change nothing.
func visitEverything(m proto.Message, fn func(msg proto.Message, packed bool), bad func(error)) {
	show := map[protoreflect.FullName]bool{}
	for _, s := range seen {
		show[s.ProtoReflect().Descriptor().FullName()] = true
	}
	fn(m, true)
	var rec func(protoreflect.Message)
	each := func(x protoreflect.Message) {
		a, ok := x.Interface().(*anypb.Any)
		if !ok {
			if show[x.Descriptor().FullName()] {
				fn(x.Interface(), false)
			}
			rec(x)
			return
		}
		inner, err := a.UnmarshalNew()
		if err != nil {
			bad(err)
			return
		}
		fn(inner, true)
		rec(inner.ProtoReflect())
	}
	rec = func(pm protoreflect.Message) {
		pm.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := range v.List().Len() {
					each(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					each(mv.Message())
					return true
				})
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				each(v.Message())
			}
			return true
		})
	}
	rec(m.ProtoReflect())
}

// shown lists, sorted, what a visitor shows of m.
func shown(t *testing.T, m proto.Message, v func(proto.Message, func(proto.Message, bool), func(error))) []string {
	var out []string
	v(m, func(x proto.Message, packed bool) {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(x.ProtoReflect().Descriptor().FullName())+" "+map[bool]string{true: "packed", false: "nested"}[packed]+" "+string(b))
	}, func(err error) { out = append(out, "bad") })
	slices.Sort(out)
	return out
}

// testCleanAnys inspects every message with cleanAnys empty and unused,
// then twice with it: what it remembers must change nothing.
func testCleanAnys(t *testing.T, ms []proto.Message) {
	// Map entries are walked in Go's random order: the problems and
	// references compare as sets.
	text := func(errs []error, refs []Ref) string {
		var out []string
		for _, err := range errs {
			out = append(out, err.Error())
		}
		for _, r := range refs {
			out = append(out, r.Type+" "+r.Name)
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	saved := cleanAnys
	defer func() { cleanAnys = saved }()
	cleanAnys = &anyCache{}
	var want []string
	for _, m := range ms {
		want = append(want, text(Inspect(m)))
	}
	if cleanAnys.byType != nil {
		t.Fatal("a cache of no size remembered something")
	}
	cleanAnys = &anyCache{limit: 8 << 20}
	for pass := range 2 {
		for i, m := range ms {
			if got := text(Inspect(m)); got != want[i] {
				t.Errorf("pass %d, %s %q: with cleanAnys\n%s\nwithout\n%s", pass, m.ProtoReflect().Descriptor().FullName(), resourceName(m), got, want[i])
			}
		}
	}
	if len(cleanAnys.byType) == 0 {
		t.Error("cleanAnys remembered nothing")
	}
}

// TestVisitShowsWhatAFullWalkShows compares visit with a walk of every
// field on every resource of the translator's golden cases, in every
// group, and on messages that hold what it must not miss at depth: a
// header value in a route's typed_per_filter_config, an Any that does
// not unmarshal.
func TestVisitShowsWhatAFullWalkShows(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "translator", "testdata", "*", "input.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	var ms []proto.Message
	for _, in := range dirs {
		snap, _, err := dirsource.Load(filepath.Dir(in))
		if err != nil {
			if _, statErr := os.Stat(in); statErr != nil {
				t.Fatal(statErr)
			}
			continue // a case of bad input the source refuses
		}
		d := dag.Build(snap, dag.Options{}).DAG
		o := translator.DefaultOptions()
		for _, r := range []*translator.Resources{translator.Envoy(d, snap, o), translator.GRPC(d, snap, o), translator.DNS(d, snap, o)} {
			ms = append(ms, r.All()...)
		}
	}
	hv, err := anypb.New(&envoy_config_route_v3.RouteConfiguration{RequestHeadersToAdd: []*envoy_config_core_v3.HeaderValueOption{{Header: &envoy_config_core_v3.HeaderValue{Key: "x", Value: "%BAD"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ms = append(ms, &envoy_config_route_v3.RouteConfiguration{Name: "deep", VirtualHosts: []*envoy_config_route_v3.VirtualHost{{
		Name:                   "vh",
		TypedPerFilterConfig:   map[string]*anypb.Any{"a": hv, "b": {TypeUrl: "type.googleapis.com/nope", Value: []byte{1}}},
		RequestHeadersToAdd:    []*envoy_config_core_v3.HeaderValueOption{{Header: &envoy_config_core_v3.HeaderValue{Key: "y", Value: "ok"}}},
		ResponseHeadersToAdd:   []*envoy_config_core_v3.HeaderValueOption{{Header: &envoy_config_core_v3.HeaderValue{Key: "z", Value: "%BAD"}}},
		RequestHeadersToRemove: []string{"w"},
	}}})
	if len(ms) < 500 {
		t.Fatalf("only %d resources: the golden cases did not load", len(ms))
	}
	t.Run("cleanAnys", func(t *testing.T) { testCleanAnys(t, ms) })
	for _, m := range ms {
		got, want := shown(t, m, visit), shown(t, m, visitEverything)
		if !slices.Equal(got, want) {
			t.Errorf("%s %q: visit shows\n%q\na full walk shows\n%q", m.ProtoReflect().Descriptor().FullName(), resourceName(m), got, want)
		}
	}
}
