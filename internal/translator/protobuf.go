package translator

import (
	"fmt"
	"time"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// toAny packs a message for a typed_config field.
//
// It marshals deterministically: anypb.New does not, and an Any that holds a
// map (ext_authz context extensions, typed_per_filter_config) would otherwise
// get different bytes on every run, and with them a new resource version
// (site/architecture.md, decisions 5 and 7).
//
// Marshalling the messages built here can fail only on a string field that
// is not valid UTF-8. Every string in the DAG was decoded from JSON or YAML,
// which cannot yield one, so a failure is a bug in this package, not bad
// input, and panics.
func toAny(m proto.Message) *anypb.Any {
	b, err := xdsres.MarshalSortedMaps(m)
	if err != nil {
		panic(fmt.Sprintf("translator: marshalling %T: %v", m, err))
	}
	return &anypb.Any{
		TypeUrl: "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName()),
		Value:   b,
	}
}

// adsConfigSource points a dynamic resource at the ADS stream it came in
// on. Every Switchyard resource is served over ADS, which is what gives the
// ordering Envoy needs (CDS before EDS, LDS before RDS), and it is also the
// only config source gRPC's xDS client accepts besides self{}.
func adsConfigSource() *envoy_config_core_v3.ConfigSource {
	// One allocation for the three messages: every cluster and listener
	// holds one.
	b := &struct {
		cs  envoy_config_core_v3.ConfigSource
		ads envoy_config_core_v3.ConfigSource_Ads
		agg envoy_config_core_v3.AggregatedConfigSource
	}{}
	b.ads.Ads = &b.agg
	b.cs.ResourceApiVersion = envoy_config_core_v3.ApiVersion_V3
	b.cs.ConfigSourceSpecifier = &b.ads
	return &b.cs
}

// duration converts a Go duration; 0 stays an explicit 0s, which Envoy
// reads as "disabled" for timeouts.
func duration(d time.Duration) *durationpb.Duration { return durationpb.New(d) }

// optDuration converts an optional duration: nil leaves the field unset so
// that Envoy's default applies.
func optDuration(d *time.Duration) *durationpb.Duration {
	if d == nil {
		return nil
	}
	return durationpb.New(*d)
}

// u32 wraps a uint32, for fields where unset and 0 mean different things.
func u32(v uint32) *wrapperspb.UInt32Value { return wrapperspb.UInt32(v) }

// boolValue wraps a bool, for fields where unset and false mean different
// things.
func boolValue(v bool) *wrapperspb.BoolValue { return wrapperspb.Bool(v) }
