package translator_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	envoy_filter_http_router_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"

	"github.com/switchyard-dev/switchyard/internal/translator"
)

// TestRouterFilter checks that the Router config routerFilter fills
// without encoding is what toAny packs.
func TestRouterFilter(t *testing.T) {
	got := translator.RouterFilter().GetTypedConfig()
	want := translator.ToAny(&envoy_filter_http_router_v3.Router{})
	if !proto.Equal(got, want) {
		t.Errorf("router filter config %v, toAny gives %v", got, want)
	}
}

// checkPacked checks that every Any in m, at any depth, holds the bytes
// the reflection encoder's Deterministic option gives for its value. A
// resource's version comes from its bytes, so packing with another
// encoder would change every version the control plane serves: vtprotobuf,
// tried for the HCM and TLS contexts, orders some fields differently (and
// writes maps in random order).
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
			want, err := proto.MarshalOptions{Deterministic: true}.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Value, want) {
				t.Errorf("%s: packed bytes differ from the deterministic encoding", a.TypeUrl)
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
