package xdsres

import (
	"strconv"
	"testing"

	"github.com/cespare/xxhash/v2"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
)

// TestTypeURL checks the spelled-out type URLs against the descriptors'.
func TestTypeURL(t *testing.T) {
	for _, m := range []proto.Message{
		&envoy_config_cluster_v3.Cluster{}, &envoy_config_endpoint_v3.ClusterLoadAssignment{}, &envoy_config_listener_v3.Listener{},
		&envoy_config_route_v3.RouteConfiguration{}, &envoy_config_route_v3.ScopedRouteConfiguration{}, &envoy_transport_socket_tls_v3.Secret{},
		&envoy_config_core_v3.Node{},
	} {
		if got, want := TypeURL(m), "type.googleapis.com/"+string(m.ProtoReflect().Descriptor().FullName()); got != want {
			t.Errorf("TypeURL(%T) = %s, want %s", m, got, want)
		}
	}
}

// TestCompactResource checks that a resource decodes to what it was made
// from, and that one made from its encoding has the same version.
func TestCompactResource(t *testing.T) {
	m := &envoy_config_cluster_v3.Cluster{Name: "a", LbPolicy: envoy_config_cluster_v3.Cluster_RANDOM}
	full, err := NewResource(m)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if compact.Version != full.Version || compact.Name != "a" {
		t.Fatalf("compact resource %+v, full %+v", compact, full)
	}
	if got := compact.Decoded(); !proto.Equal(got, m) {
		t.Fatalf("decoded %v, want %v", got, m)
	}
	if raw := NewCompactResource("a", full.Any.TypeUrl, full.Any.Value); raw.Version != full.Version || !proto.Equal(raw.Decoded(), m) {
		t.Fatal("a compact resource from its encoding differs")
	}
}

// TestVersionIsContentHash checks that a resource's version is the hex of
// its encoding's xxhash, short hashes included, and that each resource
// keeps its own.
func TestVersionIsContentHash(t *testing.T) {
	var made []*Resource
	for i := range 2000 {
		b := []byte(strconv.Itoa(i))
		r := NewCompactResource("n", "t", b)
		if want := strconv.FormatUint(xxhash.Sum64(b), 16); r.Version != want {
			t.Fatalf("version of %q = %s, want %s", b, r.Version, want)
		}
		made = append(made, r)
	}
	for i, r := range made {
		if want := strconv.FormatUint(xxhash.Sum64([]byte(strconv.Itoa(i))), 16); r.Version != want {
			t.Fatalf("version of resource %d changed to %s, want %s", i, r.Version, want)
		}
	}
}
