// Package xdscache holds the xDS resources Switchyard serves, one set per
// consumer group, and answers go-control-plane's server with them, both
// state-of-the-world and incremental (delta).
//
// Versions come from content (site/architecture.md, decision 5): a resource's version
// is a hash of its deterministic encoding, so an unchanged resource is never
// sent again, and a restarted control plane offers the same versions for
// the same input. Resources are encoded once, when they enter the cache;
// every stream that receives them shares the encoded bytes.
package xdsres

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Resource is one encoded xDS resource.
type Resource struct {
	Name    string
	Version string
	// Any holds the encoded resource; it is shared by every response and
	// must never be modified.
	Any *anypb.Any
}

// Decoded returns the resource as a message decoded from Any (nil if it
// does not decode). It never changes the resource, so it may be called
// concurrently.
func (r *Resource) Decoded() proto.Message {
	if r.Any == nil {
		return nil
	}
	m, err := r.Any.UnmarshalNew()
	if err != nil {
		return nil
	}
	return m
}

// vtMarshaler is implemented by the Envoy protos when built with
// -tags vtprotobuf: generated code that encodes without reflection. Its
// Strict variant writes fields in canonical order but map entries in Go's
// map order, so it is deterministic only for messages without a map of
// two entries or more (see vtDeterministic).
type vtMarshaler interface {
	MarshalVTStrict() ([]byte, error)
}

// Marshal encodes a message deterministically, so that equal messages
// always give equal bytes.
func Marshal(m proto.Message) ([]byte, error) {
	if vt, ok := m.(vtMarshaler); ok && vtDeterministic(m) {
		return vt.MarshalVTStrict()
	}
	return MarshalSortedMaps(m)
}

// MarshalSortedMaps encodes any message deterministically, whatever maps it
// holds: when the binary has vtproto's encoder, with it, the entries of
// every map then put in key order as protobuf-go's Deterministic option
// orders them (its bytes differ from that option's only where vtproto
// writes a oneof in field order); without it, with that option. The
// translator packs its typed_configs with it: an Any's payload is a
// message of any type, which vtDeterministic does not vouch for.
func MarshalSortedMaps(m proto.Message) ([]byte, error) {
	if _, ok := m.(vtMarshaler); ok {
		if b, ok := marshalVTSorted(m); ok {
			return b, nil
		}
		return marshalSorted(m)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// vtDeterministic reports whether the vtproto encoder gives the same bytes
// every time for a resource of m's type as Switchyard fills it. Route
// configurations carry maps of several entries (typed_per_filter_config
// with the RBAC, rate limit, CORS and authorization settings of a route,
// and the owner metadata), which vtproto writes in random order: they go
// through marshalVTSorted, which sorts vtproto's map entries in place as
// the reflection encoder's Deterministic option orders them, or, when it
// cannot, marshalSorted, which writes them sorted.
// Every other type Switchyard serves keeps its maps to one entry or
// packs them into Anys encoded deterministically; the vtprotobuf build
// of the engine's tests (make unit-vtproto) fails if that changes.
//
// Virtual hosts go the same way: the engine encodes a virtual host on its
// own to splice it into a route configuration (the fallback certificate's),
// and the spliced bytes must equal the whole configuration's encoding.
func vtDeterministic(m proto.Message) bool {
	switch m.(type) {
	case *envoy_config_route_v3.RouteConfiguration, *envoy_config_route_v3.VirtualHost:
		return false
	}
	return true
}

// NewResource encodes a resource and derives its version from the bytes.
// The resource holds only its encoding, which is what clients are sent;
// Decoded rebuilds the message when someone asks (debug output, staging).
// A control plane serving many thousands of resources keeps a fraction of
// the memory this way.
func NewResource(m proto.Message) (*Resource, error) {
	b, err := Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %T %q: %w", m, ResourceName(m), err)
	}
	return NewCompactResource(ResourceName(m), TypeURL(m), b), nil
}

// Encode is NewResource.
func Encode(m proto.Message) (*Resource, error) { return NewResource(m) }

// NewCompactResource is NewResource for a caller that already holds the
// encoding (which must be what Marshal gives for the message) and knows
// the resource's name and type URL.
func NewCompactResource(name, typeURL string, b []byte) *Resource {
	// One allocation for the resource, its Any and its version's digits,
	// 144 bytes: a build makes one per resource served, 150,000 at
	// 10,000 roots, and a version of its own would be one more each.
	blk := &struct {
		r       Resource
		any     anypb.Any
		version [16]byte
	}{}
	blk.any.TypeUrl, blk.any.Value = typeURL, b
	v := strconv.AppendUint(blk.version[:0], xxhash.Sum64(b), 16)
	blk.r.Name, blk.r.Version, blk.r.Any = name, unsafe.String(unsafe.SliceData(v), len(v)), &blk.any
	return &blk.r
}

// TypeURL returns the xDS type URL of a message. The types served are
// spelled out, which spares building the string for every resource.
func TypeURL(m proto.Message) string {
	switch m.(type) {
	case *envoy_config_cluster_v3.Cluster:
		return resource.ClusterType
	case *envoy_config_endpoint_v3.ClusterLoadAssignment:
		return resource.EndpointType
	case *envoy_config_listener_v3.Listener:
		return resource.ListenerType
	case *envoy_config_route_v3.RouteConfiguration:
		return resource.RouteType
	case *envoy_config_route_v3.ScopedRouteConfiguration:
		return resource.ScopedRouteType
	case *envoy_transport_socket_tls_v3.Secret:
		return resource.SecretType
	}
	return "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName())
}

// ResourceName returns the name xDS uses for a resource.
func ResourceName(m proto.Message) string {
	switch r := m.(type) {
	case *envoy_config_endpoint_v3.ClusterLoadAssignment:
		return r.GetClusterName()
	case interface{ GetName() string }:
		return r.GetName()
	}
	return ""
}
