package xdsres

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
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
	// oneof is, for each of fields, whether it is a member of a oneof.
	oneof []bool
	// leaf is, for each of fields, whether it is a message field without
	// a map below it, which vtproto encodes.
	leaf []bool
	// goField is, for each of fields, the index of its Go struct field
	// (of its oneof's for a oneof member), or -1: appendSorted reads it to
	// skip unset fields faster than protoreflect's Has, and appendMap to
	// read maps without converting every key and value.
	goField []int
}

var sortedPlans sync.Map // protoreflect.MessageDescriptor -> *sortedPlan

func planOf(m protoreflect.Message) *sortedPlan {
	md := m.Descriptor()
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
	p.goField = goFields(m, p.fields)
	p.leaf = make([]bool, len(p.fields))
	p.oneof = make([]bool, len(p.fields))
	for i, fd := range p.fields {
		od := fd.ContainingOneof()
		p.oneof[i] = od != nil && !od.IsSynthetic()
		if child := fd.Message(); child != nil && !fd.IsMap() {
			p.leaf[i] = !reachesMap(child, map[protoreflect.FullName]bool{child.FullName(): true})
		}
	}
	v, _ := sortedPlans.LoadOrStore(md, p)
	return v.(*sortedPlan)
}

// goFields finds the Go struct fields of fields by the field numbers in
// their protobuf tags, and of oneof members by the oneof's name.
func goFields(m protoreflect.Message, fields []protoreflect.FieldDescriptor) []int {
	out := make([]int, len(fields))
	byNumber := map[protoreflect.FieldNumber]int{}
	byOneof := map[string]int{}
	if t := reflect.TypeOf(m.Interface()); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		for i := range t.Elem().NumField() {
			f := t.Elem().Field(i)
			if name := f.Tag.Get("protobuf_oneof"); name != "" {
				byOneof[name] = i
			}
			tag := strings.Split(f.Tag.Get("protobuf"), ",")
			if len(tag) > 1 {
				if n, err := strconv.Atoi(tag[1]); err == nil {
					byNumber[protoreflect.FieldNumber(n)] = i
				}
			}
		}
	}
	for i, fd := range fields {
		out[i] = -1
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if j, ok := byOneof[string(od.Name())]; ok {
				out[i] = j
			}
		} else if j, ok := byNumber[fd.Number()]; ok {
			out[i] = j
		}
	}
	return out
}

// unset reports a Go field that holds no value: what protoreflect's Has
// says false to, except that a oneof's field may hold another member.
func unset(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.Slice, reflect.Map:
		return f.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return f.IsNil()
	default:
		return f.IsZero()
	}
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
	p := planOf(m)
	var rv reflect.Value
	if m.IsValid() {
		rv = reflect.ValueOf(m.Interface()).Elem()
	}
	for i, fd := range p.fields {
		var f reflect.Value
		if j := p.goField[i]; j >= 0 && rv.IsValid() {
			// A Go field that is set is a field Has reports, but for a
			// oneof's, which may hold another member.
			if f = rv.Field(j); unset(f) || (p.oneof[i] && !m.Has(fd)) {
				continue
			}
		} else if !m.Has(fd) {
			continue
		}
		if fd.IsMap() {
			if b, err = appendMap(b, fd, m, p.goField[i]); err != nil {
				return nil, err
			}
			continue
		}
		if f.IsValid() {
			var done bool
			if b, done, err = appendGoField(b, fd, f, p.leaf[i]); err != nil {
				return nil, err
			} else if done {
				continue
			}
		}
		v := m.Get(fd)
		switch {
		case fd.IsList() && fd.IsPacked():
			b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
			b, err = appendPrefixed(b, func(b []byte) ([]byte, error) {
				l := v.List()
				for j := range l.Len() {
					b = appendScalar(b, fd.Kind(), l.Get(j))
				}
				return b, nil
			})
		case fd.IsList():
			l, leaf := v.List(), p.leaf[i]
			for j := 0; j < l.Len() && err == nil; j++ {
				b, err = appendField(b, fd, l.Get(j), leaf)
			}
		default:
			b, err = appendField(b, fd, v, p.leaf[i])
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, m.GetUnknown()...), nil
}

// appendGoField writes the string and repeated message fields, the most
// common in what appendSorted walks, from their Go values: protoreflect
// allocates to hand them over. It reports false for the other fields.
func appendGoField(b []byte, fd protoreflect.FieldDescriptor, f reflect.Value, leaf bool) ([]byte, bool, error) {
	switch {
	case fd.Kind() == protoreflect.StringKind && f.Kind() == reflect.String:
		return protowire.AppendString(protowire.AppendTag(b, fd.Number(), protowire.BytesType), f.String()), true, nil
	case fd.Kind() == protoreflect.MessageKind && fd.IsList() && f.Kind() == reflect.Slice:
		var err error
		for k := 0; k < f.Len() && err == nil; k++ {
			msg, ok := f.Index(k).Interface().(proto.Message)
			if !ok {
				return nil, false, fmt.Errorf("field %s: %s is not a message", fd.FullName(), f.Index(k).Type())
			}
			b, err = appendMessage(protowire.AppendTag(b, fd.Number(), protowire.BytesType), msg.ProtoReflect(), leaf)
		}
		return b, true, err
	}
	return b, false, nil
}

// appendMap writes the entries in key order, each with its key and value
// even when they are zero, as protobuf-go and vtproto do. The maps of the
// resources Switchyard serves are written without reflection, which
// allocates for every key and value it touches.
func appendMap(b []byte, fd protoreflect.FieldDescriptor, msg protoreflect.Message, goField int) ([]byte, error) {
	if goField >= 0 {
		switch g := reflect.ValueOf(msg.Interface()).Elem().Field(goField).Interface().(type) {
		case map[string]*anypb.Any:
			return appendStringMap(b, fd.Number(), g, appendAny)
		case map[string]*structpb.Struct:
			return appendStringMap(b, fd.Number(), g, appendStruct)
		case map[string]*structpb.Value:
			return appendStringMap(b, fd.Number(), g, appendValue)
		}
	}
	m := msg.Get(fd).Map()
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
			b, err := appendField(b, fd.MapKey(), k.Value(), false)
			if err != nil {
				return nil, err
			}
			return appendField(b, fd.MapValue(), m.Get(k), false)
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

// appendStringMap is appendMap for a map with string keys and message
// values, which value writes length-prefixed.
func appendStringMap[V any](b []byte, num protowire.Number, m map[string]V, value func([]byte, V) ([]byte, error)) ([]byte, error) {
	var small [8]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var err error
	for _, k := range keys {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b, err = appendPrefixed(b, func(b []byte) ([]byte, error) {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendString(b, k)
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			return value(b, m[k])
		})
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// appendAny, appendStruct, appendValue and appendList write the
// well-known types of the maps above, length-prefixed, field by field as
// vtproto does.
func appendAny(b []byte, a *anypb.Any) ([]byte, error) {
	return appendPrefixed(b, func(b []byte) ([]byte, error) {
		if a == nil {
			return b, nil
		}
		if a.TypeUrl != "" {
			b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), a.TypeUrl)
		}
		if len(a.Value) > 0 {
			b = protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), a.Value)
		}
		return append(b, a.ProtoReflect().GetUnknown()...), nil
	})
}

func appendStruct(b []byte, s *structpb.Struct) ([]byte, error) {
	return appendPrefixed(b, func(b []byte) ([]byte, error) {
		if s == nil {
			return b, nil
		}
		b, err := appendStringMap(b, 1, s.Fields, appendValue)
		if err != nil {
			return nil, err
		}
		return append(b, s.ProtoReflect().GetUnknown()...), nil
	})
}

func appendValue(b []byte, v *structpb.Value) ([]byte, error) {
	return appendPrefixed(b, func(b []byte) ([]byte, error) {
		if v == nil {
			return b, nil
		}
		var err error
		switch k := v.Kind.(type) {
		case *structpb.Value_NullValue:
			b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), uint64(k.NullValue))
		case *structpb.Value_NumberValue:
			b = protowire.AppendFixed64(protowire.AppendTag(b, 2, protowire.Fixed64Type), math.Float64bits(k.NumberValue))
		case *structpb.Value_StringValue:
			b = protowire.AppendString(protowire.AppendTag(b, 3, protowire.BytesType), k.StringValue)
		case *structpb.Value_BoolValue:
			b = protowire.AppendVarint(protowire.AppendTag(b, 4, protowire.VarintType), protowire.EncodeBool(k.BoolValue))
		case *structpb.Value_StructValue:
			b, err = appendStruct(protowire.AppendTag(b, 5, protowire.BytesType), k.StructValue)
		case *structpb.Value_ListValue:
			b, err = appendList(protowire.AppendTag(b, 6, protowire.BytesType), k.ListValue)
		}
		if err != nil {
			return nil, err
		}
		return append(b, v.ProtoReflect().GetUnknown()...), nil
	})
}

func appendList(b []byte, l *structpb.ListValue) ([]byte, error) {
	return appendPrefixed(b, func(b []byte) ([]byte, error) {
		if l == nil {
			return b, nil
		}
		var err error
		for _, v := range l.Values {
			if b, err = appendValue(protowire.AppendTag(b, 1, protowire.BytesType), v); err != nil {
				return nil, err
			}
		}
		return append(b, l.ProtoReflect().GetUnknown()...), nil
	})
}

// appendField writes one tagged value of fd.
func appendField(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value, leaf bool) ([]byte, error) {
	switch k := fd.Kind(); k {
	case protoreflect.MessageKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
		return appendMessage(b, v.Message(), leaf)
	case protoreflect.GroupKind:
		return nil, fmt.Errorf("field %s: groups are not supported", fd.FullName())
	default:
		b = protowire.AppendTag(b, fd.Number(), wireType(k))
		return appendScalar(b, k, v), nil
	}
}

// appendMessage writes a length-prefixed message: with vtproto when no
// map is below it, else by walking it.
func appendMessage(b []byte, m protoreflect.Message, leaf bool) ([]byte, error) {
	if vt, ok := m.Interface().(vtSizedMarshaler); ok && m.IsValid() && (leaf || !planOf(m).hasMap) {
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
	switch wk := m.Interface().(type) {
	case *anypb.Any:
		return appendAny(b, wk)
	case *structpb.Struct:
		return appendStruct(b, wk)
	case *structpb.Value:
		return appendValue(b, wk)
	case *structpb.ListValue:
		return appendList(b, wk)
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
