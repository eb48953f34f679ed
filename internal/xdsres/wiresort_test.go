package xdsres

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// vtSortedOrSkip is marshalVTSorted, skipping the test in a build without
// vtproto's code.
func vtSortedOrSkip(t *testing.T, m proto.Message) ([]byte, bool) {
	t.Helper()
	if _, ok := m.(vtMarshaler); !ok {
		t.Skip("needs -tags vtprotobuf")
	}
	return marshalVTSorted(m)
}

// TestVTSortedIsMarshalSorted holds the in-place sort of vtproto's
// encoding to marshalSorted's bytes, over maps of zero to three entries
// in whatever order Go hands them to vtproto.
func TestVTSortedIsMarshalSorted(t *testing.T) {
	for entries := range 4 {
		m := sortedSample(t, entries)
		want, err := marshalSorted(m)
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			got, ok := vtSortedOrSkip(t, m)
			if !ok {
				t.Fatalf("%d entries: marshalVTSorted gave up", entries)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d entries: marshalVTSorted\n%x\nmarshalSorted\n%x", entries, got, want)
			}
		}
	}
}

// TestVTSortedRandom compares the two encoders on random route
// configurations with maps at every level Switchyard fills: the virtual
// host's and the route's typed_per_filter_config, a weighted cluster's,
// and metadata whose Structs nest Structs and lists.
func TestVTSortedRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 7))
	for i := range 300 {
		m := randomRouteConfig(rng)
		want, err := marshalSorted(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := vtSortedOrSkip(t, m)
		if !ok {
			t.Fatalf("case %d: marshalVTSorted gave up", i)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: marshalVTSorted\n%x\nmarshalSorted\n%x", i, got, want)
		}
		if b, err := Marshal(m); err != nil || !bytes.Equal(b, want) {
			t.Fatalf("case %d: Marshal differs from marshalSorted (%v)", i, err)
		}
	}
}

// TestVTSortedGivesUpOnSplitMaps checks that a map whose entries are not
// in one run (here one more held in the unknown fields, which vtproto
// writes last, after the retry policy, field 16) is left to
// marshalSorted, which Marshal then uses.
func TestVTSortedGivesUpOnSplitMaps(t *testing.T) {
	vh := sortedSample(t, 2).VirtualHosts[0]
	vh.RetryPolicy = &envoy_config_route_v3.RetryPolicy{RetryOn: "5xx"}
	extra, err := marshalSorted(&envoy_config_route_v3.VirtualHost{TypedPerFilterConfig: map[string]*anypb.Any{"a": {TypeUrl: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	vh.ProtoReflect().SetUnknown(extra)
	if _, ok := vtSortedOrSkip(t, vh); ok {
		t.Fatal("marshalVTSorted sorted a map split in two runs")
	}
	want, err := marshalSorted(vh)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Marshal(vh); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Marshal differs from marshalSorted (%v)", err)
	}
}

func randomRouteConfig(rng *rand.Rand) *envoy_config_route_v3.RouteConfiguration {
	vh := &envoy_config_route_v3.VirtualHost{
		Name:                 "vh",
		Domains:              []string{"a.example.com", "a.example.com:*"},
		TypedPerFilterConfig: randomPerFilter(rng),
		Metadata:             randomMetadata(rng),
	}
	for r := range rng.IntN(5) {
		rt := &envoy_config_route_v3.Route{
			Name:                 fmt.Sprint("r", r),
			Match:                &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}},
			Metadata:             randomMetadata(rng),
			TypedPerFilterConfig: randomPerFilter(rng),
		}
		action := &envoy_config_route_v3.RouteAction{}
		if rng.IntN(2) == 0 {
			action.ClusterSpecifier = &envoy_config_route_v3.RouteAction_Cluster{Cluster: "c"}
		} else {
			wc := &envoy_config_route_v3.WeightedCluster{}
			for c := range 1 + rng.IntN(3) {
				wc.Clusters = append(wc.Clusters, &envoy_config_route_v3.WeightedCluster_ClusterWeight{
					Name:                 fmt.Sprint("c", c),
					Weight:               wrapperspb.UInt32(uint32(rng.IntN(100))),
					TypedPerFilterConfig: randomPerFilter(rng),
				})
			}
			action.ClusterSpecifier = &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: wc}
		}
		rt.Action = &envoy_config_route_v3.Route_Route{Route: action}
		vh.Routes = append(vh.Routes, rt)
	}
	return &envoy_config_route_v3.RouteConfiguration{Name: "rc", VirtualHosts: []*envoy_config_route_v3.VirtualHost{vh}}
}

var randomKeys = []string{"", "a", "b", "ab", "envoy.filters.http.rbac", "envoy.filters.http.cors", "envoy.filters.http.ext_authz", "switchyard.dev", "\xff"}

func randomPerFilter(rng *rand.Rand) map[string]*anypb.Any {
	n := rng.IntN(5)
	if n == 0 {
		return nil
	}
	m := map[string]*anypb.Any{}
	for range n {
		m[randomKeys[rng.IntN(len(randomKeys))]] = &anypb.Any{TypeUrl: "type.googleapis.com/x", Value: []byte{byte(rng.IntN(256))}}
	}
	return m
}

func randomMetadata(rng *rand.Rand) *envoy_config_core_v3.Metadata {
	if rng.IntN(4) == 0 {
		return nil
	}
	md := &envoy_config_core_v3.Metadata{FilterMetadata: map[string]*structpb.Struct{}}
	for range 1 + rng.IntN(3) {
		md.FilterMetadata[randomKeys[rng.IntN(len(randomKeys))]] = randomStruct(rng, 2)
	}
	return md
}

func randomStruct(rng *rand.Rand, depth int) *structpb.Struct {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for range rng.IntN(5) {
		var v *structpb.Value
		switch k := rng.IntN(4); {
		case k == 0 && depth > 0:
			v = structpb.NewStructValue(randomStruct(rng, depth-1))
		case k == 1 && depth > 0:
			v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
				structpb.NewStructValue(randomStruct(rng, depth-1)), structpb.NewNumberValue(float64(rng.IntN(9))),
			}})
		case k == 2:
			v = structpb.NewStringValue(randomKeys[rng.IntN(len(randomKeys))])
		default:
			v = structpb.NewNumberValue(float64(rng.IntN(1000)))
		}
		s.Fields[randomKeys[rng.IntN(len(randomKeys))]] = v
	}
	return s
}

// TestVTSortedWithoutMaps checks a type with no map below it: vtproto's
// own bytes.
func TestVTSortedWithoutMaps(t *testing.T) {
	m := &envoy_type_v3.FractionalPercent{Numerator: 7, Denominator: envoy_type_v3.FractionalPercent_TEN_THOUSAND}
	got, ok := vtSortedOrSkip(t, m)
	want, err := marshalSorted(m)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("marshalVTSorted %x (%v), marshalSorted %x", got, ok, want)
	}
}
