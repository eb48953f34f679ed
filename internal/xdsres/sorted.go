package xdsres

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// vtSizedMarshaler is the part of the vtproto code that encodes into a
// buffer the caller sized (see vtMarshaler).
type vtSizedMarshaler interface {
	SizeVT() int
	MarshalToSizedBufferVTStrict([]byte) (int, error)
}

// marshalSorted encodes m as vtproto's MarshalVTStrict does, fields in
// number order, but with the entries of every map in key order, for the
// messages vtproto cannot encode deterministically because they hold maps
// of several entries (route configurations). It walks by reflection only
// the messages on the way to a map and hands every sub-message without a
// map below it to vtproto: most of a route configuration is such
// sub-messages (matches, actions, Anys), which protobuf-go's reflection
// encoder, the other deterministic choice, encodes at several times the
// cost and allocations.
//
// Its output is vtproto's whenever no map has two entries or more, and
// decodes to m; the tests hold it to both.
func marshalSorted(m proto.Message) ([]byte, error) {
	var b []byte
	if vt, ok := m.(vtSizedMarshaler); ok {
		// The size does not depend on the order of map entries.
		b = make([]byte, 0, vt.SizeVT())
	}
	return appendSorted(b, m.ProtoReflect())
}

// sortedPlan is what marshalSorted needs to know of a message type.
type sortedPlan struct {
	fields []protoreflect.FieldDescriptor // by number, as vtproto writes them
	hasMap bool                           // a map field here or below
}

var sortedPlans sync.Map // protoreflect.MessageDescriptor -> *sortedPlan

func planOf(md protoreflect.MessageDescriptor) *sortedPlan {
	if p, ok := sortedPlans.Load(md); ok {
		return p.(*sortedPlan)
	}
	fds := md.Fields()
	p := &sortedPlan{fields: make([]protoreflect.FieldDescriptor, fds.Len())}
	for i := range fds.Len() {
		p.fields[i] = fds.Get(i)
	}
	slices.SortFunc(p.fields, func(a, b protoreflect.FieldDescriptor) int { return cmp.Compare(a.Number(), b.Number()) })
	p.hasMap = reachesMap(md, map[protoreflect.FullName]bool{md.FullName(): true})
	v, _ := sortedPlans.LoadOrStore(md, p)
	return v.(*sortedPlan)
}

// reachesMap reports whether md or a message type below it has a map
// field; seen breaks the cycles of recursive types (Struct, Value).
func reachesMap(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.IsMap() {
			return true
		}
		if child := fd.Message(); child != nil && !seen[child.FullName()] {
			seen[child.FullName()] = true
			if reachesMap(child, seen) {
				return true
			}
		}
	}
	return false
}

func appendSorted(b []byte, m protoreflect.Message) ([]byte, error) {
	var err error
	for _, fd := range planOf(m.Descriptor()).fields {
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			b, err = appendMap(b, fd, v.Map())
		case fd.IsList() && fd.IsPacked():
			b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
			b, err = appendPrefixed(b, func(b []byte) ([]byte, error) {
				l := v.List()
				for i := range l.Len() {
					b = appendScalar(b, fd.Kind(), l.Get(i))
				}
				return b, nil
			})
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				b, err = appendField(b, fd, l.Get(i))
			}
		default:
			b, err = appendField(b, fd, v)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, m.GetUnknown()...), nil
}

// appendMap writes the entries in key order, each with its key and value
// even when they are zero, as protobuf-go does.
func appendMap(b []byte, fd protoreflect.FieldDescriptor, m protoreflect.Map) ([]byte, error) {
	keys := make([]protoreflect.MapKey, 0, m.Len())
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.SortFunc(keys, compareMapKeys)
	var err error
	for _, k := range keys {
		b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
		b, err = appendPrefixed(b, func(b []byte) ([]byte, error) {
			b, err := appendField(b, fd.MapKey(), k.Value())
			if err != nil {
				return nil, err
			}
			return appendField(b, fd.MapValue(), m.Get(k))
		})
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// compareMapKeys orders keys as protobuf-go's deterministic encoder does.
func compareMapKeys(a, b protoreflect.MapKey) int {
	switch x := a.Interface().(type) {
	case string:
		return cmp.Compare(x, b.String())
	case bool:
		return cmp.Compare(b2i(x), b2i(b.Bool()))
	case int32, int64:
		return cmp.Compare(a.Int(), b.Int())
	default:
		return cmp.Compare(a.Uint(), b.Uint())
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendField writes one tagged value of fd.
func appendField(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) ([]byte, error) {
	switch k := fd.Kind(); k {
	case protoreflect.MessageKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
		return appendMessage(b, v.Message())
	case protoreflect.GroupKind:
		return nil, fmt.Errorf("field %s: groups are not supported", fd.FullName())
	default:
		b = protowire.AppendTag(b, fd.Number(), wireType(k))
		return appendScalar(b, k, v), nil
	}
}

// appendMessage writes a length-prefixed message: with vtproto when no
// map is below it, else by walking it.
func appendMessage(b []byte, m protoreflect.Message) ([]byte, error) {
	if vt, ok := m.Interface().(vtSizedMarshaler); ok && m.IsValid() && !planOf(m.Descriptor()).hasMap {
		n := vt.SizeVT()
		b = protowire.AppendVarint(b, uint64(n))
		start := len(b)
		b = slices.Grow(b, n)[:start+n]
		written, err := vt.MarshalToSizedBufferVTStrict(b[start:])
		if err != nil {
			return nil, err
		}
		if written != n {
			return nil, fmt.Errorf("%s: vtproto wrote %d bytes of %d", m.Descriptor().FullName(), written, n)
		}
		return b, nil
	}
	return appendPrefixed(b, func(b []byte) ([]byte, error) { return appendSorted(b, m) })
}

// appendPrefixed writes what fill appends, preceded by its length. It
// leaves one byte for the length and moves the content when the length
// needs more: most are under 128 bytes.
func appendPrefixed(b []byte, fill func([]byte) ([]byte, error)) ([]byte, error) {
	start := len(b)
	b, err := fill(append(b, 0))
	if err != nil {
		return nil, err
	}
	n := len(b) - start - 1
	if n < 0x80 {
		b[start] = byte(n)
		return b, nil
	}
	k := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, k-1)...)
	copy(b[start+k:], b[start+1:start+1+n])
	protowire.AppendVarint(b[:start], uint64(n))
	return b, nil
}

func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Sfixed32Kind, protoreflect.Fixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Sfixed64Kind, protoreflect.Fixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind:
		return protowire.BytesType
	default:
		return protowire.VarintType
	}
}

// appendScalar writes a value of a kind other than message or group,
// untagged.
func appendScalar(b []byte, k protoreflect.Kind, v protoreflect.Value) []byte {
	switch k {
	case protoreflect.BoolKind:
		return protowire.AppendVarint(b, protowire.EncodeBool(v.Bool()))
	case protoreflect.EnumKind:
		return protowire.AppendVarint(b, uint64(v.Enum()))
	case protoreflect.Int32Kind:
		return protowire.AppendVarint(b, uint64(int32(v.Int())))
	case protoreflect.Int64Kind:
		return protowire.AppendVarint(b, uint64(v.Int()))
	case protoreflect.Sint32Kind:
		return protowire.AppendVarint(b, protowire.EncodeZigZag(int64(int32(v.Int()))))
	case protoreflect.Sint64Kind:
		return protowire.AppendVarint(b, protowire.EncodeZigZag(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		return protowire.AppendVarint(b, v.Uint())
	case protoreflect.Sfixed32Kind:
		return protowire.AppendFixed32(b, uint32(v.Int()))
	case protoreflect.Fixed32Kind:
		return protowire.AppendFixed32(b, uint32(v.Uint()))
	case protoreflect.FloatKind:
		return protowire.AppendFixed32(b, math.Float32bits(float32(v.Float())))
	case protoreflect.Sfixed64Kind:
		return protowire.AppendFixed64(b, uint64(v.Int()))
	case protoreflect.Fixed64Kind:
		return protowire.AppendFixed64(b, v.Uint())
	case protoreflect.DoubleKind:
		return protowire.AppendFixed64(b, math.Float64bits(v.Float()))
	case protoreflect.StringKind:
		return protowire.AppendString(b, v.String())
	default: // BytesKind
		return protowire.AppendBytes(b, v.Bytes())
	}
}
