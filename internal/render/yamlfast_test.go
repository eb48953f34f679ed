package render

import (
	"slices"
	"strings"
	"testing"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_upstream_http_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	yamlv2 "go.yaml.in/yaml/v2"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestYAMLKeyOrder sorts keys that differ in digits, case and punctuation
// both ways.
func TestYAMLKeyOrder(t *testing.T) {
	keys := []string{"a10", "a9", "a09", "a_b", "aB", "a.b", "@type", "a0", "a00", "a1", "x2y10", "x2y9", "v3", "v10",
		"b-1", "b+1", "b=1", "b/1", "b1", "b", "B", "ab", "a", "z0", "z", "a100", "a19", "a1000x", "a1000"}
	m := map[string]int{}
	for _, k := range keys {
		m[k] = 0
	}
	out, err := yamlv2.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		want = append(want, strings.Trim(strings.TrimSuffix(line, ": 0"), "'"))
	}
	got := slices.Clone(keys)
	slices.SortFunc(got, yamlKeyCompare)
	if !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestFastYAMLItem prints a cluster of the usual shape without the YAML
// encoder, as the encoder prints it, and leaves one with a quoted name to
// the encoder.
func TestFastYAMLItem(t *testing.T) {
	opts, err := anypb.New(&envoy_upstream_http_v3.HttpProtocolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &envoy_config_cluster_v3.Cluster{
		Name: "shop/web/80/1acbb1ab06da7a4a", ConnectTimeout: durationpb.New(250e6),
		ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_EDS},
		EdsClusterConfig: &envoy_config_cluster_v3.Cluster_EdsClusterConfig{ServiceName: "shop/web/80/1acbb1ab06da7a4a",
			EdsConfig: &envoy_config_core_v3.ConfigSource{ConfigSourceSpecifier: &envoy_config_core_v3.ConfigSource_Ads{}}},
		PerConnectionBufferLimitBytes: wrapperspb.UInt32(32768),
		TypedExtensionProtocolOptions: map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": opts},
		DnsLookupFamily:               envoy_config_cluster_v3.Cluster_V4_ONLY,
		LoadAssignment:                nil,
	}
	tree := &treeSink{}
	if err := (&walker{s: tree}).message(c.ProtoReflect()); err != nil {
		t.Fatal(err)
	}
	got, ok := fastYAMLItem(nil, tree.root, 2)
	if !ok {
		t.Fatal("the usual cluster went to the YAML encoder")
	}
	want, err := yamlv2.Marshal(map[string]any{"resources": map[string]any{"t": []any{tree.root}}})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.SplitN(string(want), "\n", 3)[2]; string(got) != w {
		t.Errorf("got:\n%s\nwant:\n%s", got, w)
	}
	c.Name = "grpc-server/web.example.com/::"
	tree = &treeSink{}
	if err := (&walker{s: tree}).message(c.ProtoReflect()); err != nil {
		t.Fatal(err)
	}
	if _, ok := fastYAMLItem(nil, tree.root, 2); ok {
		t.Error("a name the encoder quotes was printed plain")
	}
}
