package xdscheck

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_filter_http_ext_authz_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	envoy_filter_http_router_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

type hcmT = envoy_filter_network_http_connection_manager_v3.HttpConnectionManager

// apiHCM is a gRPC host's connection manager, as the translator makes it,
// changed by change.
func apiHCM(t *testing.T, route string, change func(*hcmT)) []byte {
	router, err := anypb.New(&envoy_filter_http_router_v3.Router{})
	if err != nil {
		t.Fatal(err)
	}
	hcm := &hcmT{
		StatPrefix: "grpc",
		RouteSpecifier: &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_Rds{Rds: &envoy_filter_network_http_connection_manager_v3.Rds{
			ConfigSource: &envoy_config_core_v3.ConfigSource{
				ResourceApiVersion:    envoy_config_core_v3.ApiVersion_V3,
				ConfigSourceSpecifier: &envoy_config_core_v3.ConfigSource_Ads{Ads: &envoy_config_core_v3.AggregatedConfigSource{}},
			},
			RouteConfigName: route,
		}},
		HttpFilters: []*envoy_filter_network_http_connection_manager_v3.HttpFilter{{
			Name:       "envoy.filters.http.router",
			ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
	}
	if change != nil {
		change(hcm)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(hcm)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// extAuthz is an ext_authz filter calling cluster over gRPC.
func extAuthz(t *testing.T, cluster string) *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	cfg, err := anypb.New(&envoy_filter_http_ext_authz_v3.ExtAuthz{Services: &envoy_filter_http_ext_authz_v3.ExtAuthz_GrpcService{GrpcService: &envoy_config_core_v3.GrpcService{
		TargetSpecifier: &envoy_config_core_v3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &envoy_config_core_v3.GrpcService_EnvoyGrpc{ClusterName: cluster}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return &envoy_filter_network_http_connection_manager_v3.HttpFilter{
		Name:       "envoy.filters.http.ext_authz",
		ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: cfg},
	}
}

// rdsField is an encoded rds field holding raw, the Rds message's bytes.
func rdsField(raw []byte) []byte {
	b := protowire.AppendTag(nil, hcmRDSField, protowire.BytesType)
	return protowire.AppendBytes(b, raw)
}

// nameField is an encoded route_config_name.
func nameField(name []byte) []byte {
	b := protowire.AppendTag(nil, rdsRouteConfName, protowire.BytesType)
	return protowire.AppendBytes(b, name)
}

// hcmVariants are encodings of connection managers, keyed by a family
// name, each made for a route configuration name: clean ones, invalid
// ones, and encodings maskRDS must decline or whose name decides what
// they decode to.
func hcmVariants(t *testing.T) map[string]func(route string) []byte {
	plain := func(route string) []byte { return apiHCM(t, route, nil) }
	noRDS := func(route string) []byte {
		return apiHCM(t, route, func(h *hcmT) { h.RouteSpecifier = nil })
	}
	return map[string]func(string) []byte{
		"clean": plain,
		"clean, other prefix": func(route string) []byte {
			return apiHCM(t, route, func(h *hcmT) { h.StatPrefix = "other" })
		},
		"no stat prefix": func(route string) []byte {
			return apiHCM(t, route, func(h *hcmT) { h.StatPrefix = "" })
		},
		"filter does not unmarshal": func(route string) []byte {
			return apiHCM(t, route, func(h *hcmT) {
				h.HttpFilters[0].GetTypedConfig().TypeUrl = "type.googleapis.com/nope"
			})
		},
		"no config source": func(route string) []byte {
			return apiHCM(t, route, func(h *hcmT) { h.GetRds().ConfigSource = nil })
		},
		"ext_authz service": func(route string) []byte {
			return apiHCM(t, route, func(h *hcmT) {
				h.HttpFilters = append([]*envoy_filter_network_http_connection_manager_v3.HttpFilter{extAuthz(t, "authz")}, h.HttpFilters...)
			})
		},
		"name not UTF-8": func(route string) []byte {
			return append(noRDS(route), rdsField(append(nameField([]byte(route+"\xff")), 0x0a, 0x00))...)
		},
		"name not UTF-8 for some": func(route string) []byte {
			if strings.HasSuffix(route, "1") {
				route += "\xc3"
			}
			return append(noRDS(route), rdsField(nameField([]byte(route)))...)
		},
		"rds twice": func(route string) []byte {
			return append(plain(route), rdsField(nameField([]byte("second")))...)
		},
		"name twice": func(route string) []byte {
			return append(noRDS(route), rdsField(append(nameField([]byte(route)), nameField([]byte("again"))...))...)
		},
		"name as a number": func(route string) []byte {
			raw := protowire.AppendVarint(protowire.AppendTag(nil, rdsRouteConfName, protowire.VarintType), uint64(len(route)))
			return append(noRDS(route), rdsField(raw)...)
		},
		"route_config after rds": func(route string) []byte {
			b := plain(route)
			b = protowire.AppendTag(b, 4, protowire.BytesType)
			return protowire.AppendBytes(b, nil)
		},
		"route_config after rds, ext_authz": func(route string) []byte {
			b := apiHCM(t, route, func(h *hcmT) {
				h.HttpFilters = append([]*envoy_filter_network_http_connection_manager_v3.HttpFilter{extAuthz(t, "authz")}, h.HttpFilters...)
			})
			b = protowire.AppendTag(b, 4, protowire.BytesType)
			return protowire.AppendBytes(b, nil)
		},
		"truncated": func(route string) []byte {
			b := plain(route)
			return b[:len(b)-1]
		},
		"empty name for some": func(route string) []byte {
			if strings.HasSuffix(route, "2") {
				route = ""
			}
			return append(noRDS(route), rdsField(nameField([]byte(route)))...)
		},
	}
}

// inspectText is everything Inspect finds, in its order.
func inspectText(m proto.Message) string {
	errs, refs := Inspect(m)
	var out []string
	for _, err := range errs {
		out = append(out, "error "+err.Error())
	}
	for _, r := range refs {
		out = append(out, r.Type+" "+r.Name)
	}
	return strings.Join(out, "\n")
}

// inspectedShuffled inspects ms with cleanAnys unused, then in four
// random orders with a new one, which it leaves in cleanAnys, failing t
// when an inspection with it differs from the one without. It returns
// the inspections without it.
func inspectedShuffled(t *testing.T, ms []proto.Message, rng *rand.Rand) map[proto.Message]string {
	t.Helper()
	cleanAnys = &anyCache{}
	want := map[proto.Message]string{}
	for _, m := range ms {
		want[m] = inspectText(m)
	}
	cleanAnys = &anyCache{limit: 8 << 20}
	for pass := range 4 {
		rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		for _, m := range ms {
			if got := inspectText(m); got != want[m] {
				t.Errorf("pass %d, %q: with cleanAnys\n%s\nunpacked\n%s", pass, resourceName(m), got, want[m])
			}
		}
	}
	return want
}

// directoryShape is every resource of the groups of a translation of
// scalegen.DirectoryShape(roots).
func directoryShape(tb testing.TB, roots int) []*translator.Resources {
	tb.Helper()
	set, err := scalegen.Generate(scalegen.DirectoryShape(roots))
	if err != nil {
		tb.Fatal(err)
	}
	snap := set.Snapshot()
	d := dag.Build(snap, dag.Options{}).DAG
	o := translator.DefaultOptions()
	return []*translator.Resources{translator.Envoy(d, snap, o), translator.GRPC(d, snap, o), translator.DNS(d, snap, o)}
}

// TestMaskedConnectionManagersAreInspected inspects gRPC-style listeners
// of every variant under many route names, in random orders, with
// cleanAnys unused and then with it: finding a connection manager by its
// bytes with the route name masked must give the same problems and the
// same references, in the same order, as unpacking it.
func TestMaskedConnectionManagersAreInspected(t *testing.T) {
	var ms []proto.Message
	for family, make := range hcmVariants(t) {
		for i := range 6 {
			route := fmt.Sprintf("route-%d", i)
			ms = append(ms, &envoy_config_listener_v3.Listener{
				Name:        family + " " + route,
				ApiListener: &envoy_config_listener_v3.ApiListener{ApiListener: &anypb.Any{TypeUrl: hcmType, Value: make(route)}},
			})
		}
	}
	saved := cleanAnys
	defer func() { cleanAnys = saved }()
	want := inspectedShuffled(t, ms, rand.New(rand.NewPCG(1, 2)))
	if n := len(cleanAnys.byMasked); n == 0 || n > 8 {
		t.Errorf("cleanAnys holds %d connection managers by their masked bytes; want one for each clean family", n)
	}
	if !slices.ContainsFunc(ms, func(m proto.Message) bool { return strings.HasPrefix(want[m], "error ") }) {
		t.Error("no variant has a problem")
	}
}

// TestGeneratedBuildInspectedWithCleanAnys inspects every resource of a
// generated build's groups (gRPC hosts with TLS, ext_authz, server
// listeners) with cleanAnys unused, then twice with it: the problems and
// references, in their order, must not change, and the gRPC hosts'
// connection managers, of their api and their server listeners, must be
// found by their masked bytes.
func TestGeneratedBuildInspectedWithCleanAnys(t *testing.T) {
	var ms []proto.Message
	for _, r := range directoryShape(t, 60) {
		ms = append(ms, r.All()...)
	}
	saved := cleanAnys
	defer func() { cleanAnys = saved }()
	cleanAnys = &anyCache{}
	want := make([]string, len(ms))
	for i, m := range ms {
		want[i] = inspectText(m)
	}
	cleanAnys = &anyCache{limit: 8 << 20}
	for pass := range 2 {
		for i, m := range ms {
			if got := inspectText(m); got != want[i] {
				t.Errorf("pass %d, %s %q: with cleanAnys\n%s\nunpacked\n%s", pass, m.ProtoReflect().Descriptor().FullName(), resourceName(m), got, want[i])
			}
		}
	}
	if len(cleanAnys.byMasked) == 0 {
		t.Error("no connection manager was remembered by its masked bytes")
	}
	if len(cleanAnys.byInline) == 0 {
		t.Error("no server listener's connection manager was remembered by its masked bytes")
	}
}

// TestForgetCleanEmptiesTheMemo forgets the clean Anys of a generated
// build: nothing is held, and inspecting again finds the same, putting
// back what it inspects.
func TestForgetCleanEmptiesTheMemo(t *testing.T) {
	set, err := scalegen.Generate(scalegen.DirectoryShape(20))
	if err != nil {
		t.Fatal(err)
	}
	snap := set.Snapshot()
	ms := translator.Envoy(dag.Build(snap, dag.Options{}).DAG, snap, translator.DefaultOptions()).All()
	saved := cleanAnys
	defer func() { cleanAnys = saved }()
	cleanAnys = &anyCache{limit: 8 << 20}
	want := make([]string, len(ms))
	for i, m := range ms {
		want[i] = inspectText(m)
	}
	if CleanHeld() == 0 {
		t.Fatal("inspecting a build remembered no clean Any")
	}
	ForgetClean()
	if CleanHeld() != 0 || len(cleanAnys.byType) != 0 || len(cleanAnys.byMasked) != 0 || len(cleanAnys.byInline) != 0 {
		t.Fatalf("after ForgetClean the memo holds %d bytes", CleanHeld())
	}
	for i, m := range ms {
		if got := inspectText(m); got != want[i] {
			t.Errorf("%q after ForgetClean:\n%s\nbefore\n%s", resourceName(m), got, want[i])
		}
	}
	if CleanHeld() == 0 {
		t.Error("inspecting after ForgetClean remembered no clean Any")
	}
}
