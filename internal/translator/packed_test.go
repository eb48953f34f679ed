package translator_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	envoy_access_logger_stream_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	envoy_filter_http_cors_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	envoy_filter_http_local_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	envoy_filter_http_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	envoy_filter_http_router_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestConstFilters checks that the filters constFilter packs without
// encoding, and the stdout access log, are what httpFilter and toAny
// pack, bytes of the Any included.
func TestConstFilters(t *testing.T) {
	for _, tt := range []struct {
		got  *envoy_filter_network_http_connection_manager_v3.HttpFilter
		name string
		cfg  proto.Message
	}{
		{translator.RouterFilter(), "envoy.filters.http.router", &envoy_filter_http_router_v3.Router{}},
		{translator.RBACFilter(), "envoy.filters.http.rbac", &envoy_filter_http_rbac_v3.RBAC{}},
		{translator.CORSFilter(), "envoy.filters.http.cors", &envoy_filter_http_cors_v3.Cors{}},
		{translator.LocalRateLimitFilter(), "envoy.filters.http.local_ratelimit", &envoy_filter_http_local_ratelimit_v3.LocalRateLimit{StatPrefix: translator.LocalRateLimitPrefix}},
	} {
		want := translator.HTTPFilter(tt.name, tt.cfg)
		if !proto.Equal(tt.got, want) {
			t.Errorf("%s: filter %v, httpFilter gives %v", tt.name, tt.got, want)
		}
		if got, want := tt.got.GetTypedConfig(), want.GetTypedConfig(); got.TypeUrl != want.TypeUrl || !bytes.Equal(got.Value, want.Value) {
			t.Errorf("%s: config %q %x, toAny gives %q %x", tt.name, got.TypeUrl, got.Value, want.TypeUrl, want.Value)
		}
	}
	got, want := translator.StdoutAccessLog().GetTypedConfig(), translator.ToAny(&envoy_access_logger_stream_v3.StdoutAccessLog{})
	if !proto.Equal(got, want) || got.TypeUrl != want.TypeUrl || !bytes.Equal(got.Value, want.Value) {
		t.Errorf("stdout access log config %v, toAny gives %v", got, want)
	}
}

// checkPacked checks that every Any in m, at any depth, holds the bytes
// xdsres.MarshalSortedMaps gives for its value decoded afresh. A
// resource's version comes from its bytes, and a decoded map iterates in
// a new random order: an Any packed with its map entries in any order but
// the keys' would give its resource a new version for the same input. In
// the vtprotobuf build (make unit-vtproto) the Anys are vtproto's
// encoding, whose maps come out in random order until sorted.
func checkPacked(t *testing.T, m proto.Message) {
	t.Helper()
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if a, ok := m.Interface().(*anypb.Any); ok {
			v, err := a.UnmarshalNew()
			if err != nil {
				t.Errorf("%s: %v", a.TypeUrl, err)
				return
			}
			want, err := xdsres.MarshalSortedMaps(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Value, want) {
				t.Errorf("%s: packed bytes differ from the encoding with map entries in key order", a.TypeUrl)
			}
			walk(v.ProtoReflect())
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsMap():
				if fd.MapValue().Message() != nil {
					v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
						walk(e.Message())
						return true
					})
				}
			case fd.IsList():
				if fd.Message() != nil {
					l := v.List()
					for i := range l.Len() {
						walk(l.Get(i).Message())
					}
				}
			case fd.Message() != nil:
				walk(v.Message())
			}
			return true
		})
	}
	walk(m.ProtoReflect())
}
