package xdscheck_test

import (
	"testing"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/switchyard-dev/switchyard/internal/xdscheck"
)

// TestDecodesAgreesWithTheDecoder feeds Decodes and proto.Unmarshal the
// same encodings of a listener, good and bad at the top and at depth.
func TestDecodesAgreesWithTheDecoder(t *testing.T) {
	d := (*envoy_config_listener_v3.Listener)(nil).ProtoReflect().Descriptor()
	num := func(d protoreflect.MessageDescriptor, name string) protowire.Number {
		return d.Fields().ByName(protoreflect.Name(name)).Number()
	}
	str := func(n protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, n, protowire.BytesType), s)
	}
	chain := func(inner []byte) []byte {
		b := protowire.AppendTag(nil, num(d, "filter_chains"), protowire.BytesType)
		return protowire.AppendBytes(b, inner)
	}
	fc := d.Fields().ByName("filter_chains").Message()
	good, err := proto.Marshal(&envoy_config_listener_v3.Listener{Name: "l", FilterChains: []*envoy_config_listener_v3.FilterChain{{Name: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"a listener":                  good,
		"nothing":                     nil,
		"name not UTF-8":              str(num(d, "name"), "\xff"),
		"chain name not UTF-8":        chain(str(num(fc, "name"), "a\xfe")),
		"chain name UTF-8":            chain(str(num(fc, "name"), "é")),
		"truncated":                   good[:len(good)-1],
		"an unknown field":            str(999, "\xff"),
		"a field number of 0":         {0x02, 0x00},
		"a varint that does not end":  {0x08, 0xff},
		"a length beyond the message": {0x0a, 0x05, 'a'},
	}
	for name, b := range cases {
		want := proto.Unmarshal(b, &envoy_config_listener_v3.Listener{}) == nil
		if got := xdscheck.Decodes(d, b); got != want {
			t.Errorf("%s: Decodes = %v, the decoder says %v", name, got, want)
		}
	}
}
