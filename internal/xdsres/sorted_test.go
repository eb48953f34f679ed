package xdsres

import (
	"bytes"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_ext_authz_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// sortedSample is a route configuration with a field of every shape
// marshalSorted meets: oneofs beside plain fields, packed and unpacked
// repeated fields, nested Structs and lists, Anys, unknown fields, and
// maps of entries entries each.
func sortedSample(t *testing.T, entries int) *envoy_config_route_v3.RouteConfiguration {
	t.Helper()
	keys := []string{"envoy.filters.http.rbac", "envoy.filters.http.cors", "envoy.filters.http.ext_authz"}[:entries]
	perFilter := map[string]*anypb.Any{}
	fields := map[string]*structpb.Value{}
	for i, k := range keys {
		perFilter[k] = &anypb.Any{TypeUrl: "type.googleapis.com/" + k, Value: []byte{byte(i), 1, 2}}
		fields[k] = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
			structpb.NewNumberValue(-1.5), structpb.NewBoolValue(true), structpb.NewStructValue(&structpb.Struct{}),
		}})
	}
	route := &envoy_config_route_v3.Route{
		Name: "r",
		Match: &envoy_config_route_v3.RouteMatch{
			PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/api"},
			Headers:       []*envoy_config_route_v3.HeaderMatcher{{Name: "x", HeaderMatchSpecifier: &envoy_config_route_v3.HeaderMatcher_PresentMatch{PresentMatch: true}}},
			CaseSensitive: wrapperspb.Bool(false),
		},
		Action: &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{
			ClusterSpecifier: &envoy_config_route_v3.RouteAction_Cluster{Cluster: "c"},
			Timeout:          durationpb.New(1500),
			Priority:         envoy_config_core_v3.RoutingPriority_HIGH,
			RetryPolicy:      &envoy_config_route_v3.RetryPolicy{RetriableStatusCodes: []uint32{503, 504, 1 << 20}},
		}},
		Metadata:             &envoy_config_core_v3.Metadata{FilterMetadata: map[string]*structpb.Struct{"switchyard.dev": {Fields: fields}}},
		TypedPerFilterConfig: perFilter,
	}
	rc := &envoy_config_route_v3.RouteConfiguration{
		Name: "rc",
		VirtualHosts: []*envoy_config_route_v3.VirtualHost{{
			Name:                 "vh",
			Domains:              []string{"a.example.com", "*"},
			Routes:               []*envoy_config_route_v3.Route{route, {Name: "empty"}},
			TypedPerFilterConfig: perFilter,
		}},
		ValidateClusters: wrapperspb.Bool(true),
	}
	rc.VirtualHosts[0].ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7))
	return rc
}

// TestMarshalSortedIsVTProto checks marshalSorted against vtproto's own
// encoding where that is deterministic: every map of one entry.
func TestMarshalSortedIsVTProto(t *testing.T) {
	m := sortedSample(t, 1)
	vt, ok := proto.Message(m).(vtMarshaler)
	if !ok {
		t.Skip("needs -tags vtprotobuf")
	}
	want, err := vt.MarshalVTStrict()
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalSorted(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("marshalSorted:\n%x\nvtproto:\n%x", got, want)
	}
}

// TestMarshalSortedOrdersMaps checks that entries are written in key
// order: a virtual host holding only a map encodes as the concatenation of
// its one-entry maps, by key.
func TestMarshalSortedOrdersMaps(t *testing.T) {
	perFilter := sortedSample(t, 3).VirtualHosts[0].TypedPerFilterConfig
	var want []byte
	for _, k := range []string{"envoy.filters.http.cors", "envoy.filters.http.ext_authz", "envoy.filters.http.rbac"} {
		b, err := marshalSorted(&envoy_config_route_v3.VirtualHost{TypedPerFilterConfig: map[string]*anypb.Any{k: perFilter[k]}})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	for range 20 {
		got, err := marshalSorted(&envoy_config_route_v3.VirtualHost{TypedPerFilterConfig: perFilter})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("entries out of key order:\n%x\nwant\n%x", got, want)
		}
	}
}

// TestMarshalSortedOrdersOtherMaps is TestMarshalSortedOrdersMaps for a
// map type that takes the reflection path (map<string, string>).
func TestMarshalSortedOrdersOtherMaps(t *testing.T) {
	ext := map[string]string{"c": "3", "a": "1", "b": ""}
	var want []byte
	for _, k := range []string{"a", "b", "c"} {
		b, err := marshalSorted(&envoy_filter_http_ext_authz_v3.CheckSettings{ContextExtensions: map[string]string{k: ext[k]}})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	for range 20 {
		got, err := marshalSorted(&envoy_filter_http_ext_authz_v3.CheckSettings{ContextExtensions: ext})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("entries out of key order:\n%x\nwant\n%x", got, want)
		}
	}
}

// TestMarshalSortedRoundTrips checks that a message with maps of several
// entries decodes to itself and encodes the same every time.
func TestMarshalSortedRoundTrips(t *testing.T) {
	m := sortedSample(t, 3)
	first, err := marshalSorted(m)
	if err != nil {
		t.Fatal(err)
	}
	var back envoy_config_route_v3.RouteConfiguration
	if err := proto.Unmarshal(first, &back); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&back, m) {
		t.Fatalf("decoded\n%v\nwant\n%v", &back, m)
	}
	for range 20 {
		if b, err := marshalSorted(m); err != nil || !bytes.Equal(b, first) {
			t.Fatalf("encoded differently from one time to the next (%v)", err)
		}
	}
}

// BenchmarkMarshalSorted compares marshalSorted and marshalVTSorted with
// protobuf-go's deterministic encoder on a route configuration of 20 routes.
func BenchmarkMarshalSorted(b *testing.B) {
	m := sortedSample(&testing.T{}, 3)
	vh := m.VirtualHosts[0]
	for range 19 {
		vh.Routes = append(vh.Routes, proto.CloneOf(vh.Routes[0]))
	}
	b.Run("encoder=sorted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalSorted(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoder=vtsorted", func(b *testing.B) {
		if _, ok := marshalVTSorted(m); !ok {
			b.Skip("needs -tags vtprotobuf")
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := marshalVTSorted(m); !ok {
				b.Fatal("marshalVTSorted gave up")
			}
		}
	})
	b.Run("encoder=reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (proto.MarshalOptions{Deterministic: true}).Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
