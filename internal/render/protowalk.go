package render

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// sink receives a resource as a stream of JSON values, object members in
// the order they are printed. The JSON writer prints them as they come;
// the YAML output collects them into a tree for the YAML encoder.
type sink interface {
	beginObject()
	key(k string)
	endObject()
	beginArray()
	endArray()
	str(s string)
	// number is a JSON number literal, formatted as protojson formats it.
	number(lit []byte)
	boolean(b bool)
	null()
}

// redactedKey is the field whose value render never prints: the private
// key of a TLS certificate.
const redactedKey = "private_key"

// walker prints a message the way protojson (with proto names) prints it,
// with the keys of every object sorted and private keys redacted, straight
// from protoreflect. It is what the output was before it was fast: protojson,
// decoded into maps, re-encoded by encoding/json with sorted keys. The JSON
// mapping's rarer well-known types (Timestamp, FieldMask) still go through
// protojson and that decoding, which is exact by construction and costs
// nothing where they do not appear.
type walker struct {
	s sink
	// num is the scratch buffer numbers are formatted in.
	num []byte
	// members are the scratch stack of the objects being printed.
	members []member
	// occs and entries are the wire walker's scratch stacks.
	occs    []wireOcc
	entries []wireEntry
}

// member is one object member waiting to be printed in key order.
type member struct {
	key string
	fd  protoreflect.FieldDescriptor
	v   protoreflect.Value
	// typeURL, when set, is an Any's "@type"; fd is nil.
	typeURL string
}

func (w *walker) message(m protoreflect.Message) error {
	switch wkt(m.Descriptor().FullName()) {
	case wktAny:
		return w.anyMessage(m)
	case wktDuration:
		return w.duration(m)
	case wktWrapper:
		fd := m.Descriptor().Fields().ByNumber(1)
		return w.singular(m.Get(fd), fd)
	case wktStruct:
		// Route metadata is a Struct: common enough to print directly.
		fd := m.Descriptor().Fields().ByNumber(1)
		return w.mapField(m.Get(fd).Map(), fd)
	case wktListValue:
		fd := m.Descriptor().Fields().ByNumber(1)
		return w.list(m.Get(fd).List(), fd)
	case wktValue:
		fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("kind"))
		if fd == nil {
			return errors.New("google.protobuf.Value: none of the oneof fields is set")
		}
		if fd.Kind() == protoreflect.DoubleKind {
			if f := m.Get(fd).Float(); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("google.protobuf.Value.number_value: invalid %v value", f)
			}
		}
		return w.singular(m.Get(fd), fd)
	case wktOther:
		return w.viaProtoJSON(m)
	}
	return w.fields(m, "")
}

// fields prints a message's populated fields, and typeURL as "@type" for
// the message inside an Any.
func (w *walker) fields(m protoreflect.Message, typeURL string) error {
	base := len(w.members)
	if typeURL != "" {
		w.members = append(w.members, member{key: "@type", typeURL: typeURL})
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		w.members = append(w.members, member{key: fd.TextName(), fd: fd, v: v})
		return true
	})
	own := w.members[base:]
	slices.SortFunc(own, func(a, b member) int { return strings.Compare(a.key, b.key) })
	w.s.beginObject()
	var err error
	for i := base; i < len(w.members) && err == nil; i++ {
		// Indexed, not ranged: printing a field can grow (and move) the stack.
		mb := w.members[i]
		w.s.key(mb.key)
		if mb.key != redactedKey {
			err = w.member(mb)
		} else {
			err = w.redact(func() error { return w.member(mb) })
		}
	}
	w.members = w.members[:base]
	w.s.endObject()
	return err
}

func (w *walker) member(mb member) error {
	switch {
	case mb.fd == nil:
		return w.str(mb.typeURL, "@type")
	case mb.fd.IsList():
		return w.list(mb.v.List(), mb.fd)
	case mb.fd.IsMap():
		return w.mapField(mb.v.Map(), mb.fd)
	}
	return w.singular(mb.v, mb.fd)
}

// redact prints the placeholder of a value under redactedKey. The value
// is still walked, printed nowhere, so that what would not print (a string
// that is not UTF-8) fails there as it fails anywhere.
func (w *walker) redact(print func() error) error {
	s := w.s
	w.s = discard{}
	err := print()
	w.s = s
	if err != nil {
		return err
	}
	w.placeholder()
	return nil
}

// placeholder is what a redacted value prints as.
func (w *walker) placeholder() {
	w.s.beginObject()
	w.s.key("inline_bytes")
	w.s.str("REDACTED")
	w.s.endObject()
}

// discard is a sink that prints nothing.
type discard struct{}

func (discard) beginObject()  {}
func (discard) key(string)    {}
func (discard) endObject()    {}
func (discard) beginArray()   {}
func (discard) endArray()     {}
func (discard) str(string)    {}
func (discard) number([]byte) {}
func (discard) boolean(bool)  {}
func (discard) null()         {}

func (w *walker) str(s, field string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("field %s contains invalid UTF-8", field)
	}
	w.s.str(s)
	return nil
}

func (w *walker) list(l protoreflect.List, fd protoreflect.FieldDescriptor) error {
	w.s.beginArray()
	defer w.s.endArray()
	for i := range l.Len() {
		if err := w.singular(l.Get(i), fd); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) mapField(mp protoreflect.Map, fd protoreflect.FieldDescriptor) error {
	type entry struct {
		key string
		v   protoreflect.Value
	}
	entries := make([]entry, 0, mp.Len())
	mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		entries = append(entries, entry{k.String(), v})
		return true
	})
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	w.s.beginObject()
	defer w.s.endObject()
	for _, e := range entries {
		if !utf8.ValidString(e.key) {
			return fmt.Errorf("field %s has a key that is not UTF-8", fd.FullName())
		}
		w.s.key(e.key)
		var err error
		if e.key != redactedKey {
			err = w.singular(e.v, fd.MapValue())
		} else {
			err = w.redact(func() error { return w.singular(e.v, fd.MapValue()) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) singular(v protoreflect.Value, fd protoreflect.FieldDescriptor) error {
	if !v.IsValid() {
		w.s.null()
		return nil
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		w.s.boolean(v.Bool())
	case protoreflect.StringKind:
		return w.str(v.String(), string(fd.FullName()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		w.numberOut(strconv.AppendInt(w.num[:0], v.Int(), 10))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		w.numberOut(strconv.AppendUint(w.num[:0], v.Uint(), 10))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		// The JSON mapping writes 64-bit integers as strings.
		w.s.str(strconv.FormatInt(v.Int(), 10))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		w.s.str(strconv.FormatUint(v.Uint(), 10))
	case protoreflect.FloatKind:
		w.float(v.Float(), 32)
	case protoreflect.DoubleKind:
		w.float(v.Float(), 64)
	case protoreflect.BytesKind:
		w.s.str(base64.StdEncoding.EncodeToString(v.Bytes()))
	case protoreflect.EnumKind:
		if fd.Enum().FullName() == "google.protobuf.NullValue" {
			w.s.null()
		} else if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			w.s.str(string(ev.Name()))
		} else {
			w.numberOut(strconv.AppendInt(w.num[:0], int64(v.Enum()), 10))
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return w.message(v.Message())
	default:
		return fmt.Errorf("field %s has unknown kind %v", fd.FullName(), fd.Kind())
	}
	return nil
}

func (w *walker) numberOut(b []byte) {
	w.num = b
	w.s.number(b)
}

// float formats a float as the JSON mapping does: the special values as
// strings, otherwise the shortest form that reads back as the same value
// of its size, with an exponent outside [1e-6, 1e21) whose leading zero is
// dropped ("1e-07" is "1e-7").
func (w *walker) float(f float64, bits int) {
	switch {
	case math.IsNaN(f):
		w.s.str("NaN")
		return
	case math.IsInf(f, 1):
		w.s.str("Infinity")
		return
	case math.IsInf(f, -1):
		w.s.str("-Infinity")
		return
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 {
		small, large := a < 1e-6, a >= 1e21
		if bits == 32 {
			small, large = float32(a) < 1e-6, float32(a) >= 1e21
		}
		if small || large {
			format = 'e'
		}
	}
	b := strconv.AppendFloat(w.num[:0], f, format, -1, bits)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	w.numberOut(b)
}

// anyMessage prints an Any as the JSON mapping does: its message's fields
// beside "@type", or, for a well-known type, that type's JSON under
// "value".
func (w *walker) anyMessage(m protoreflect.Message) error {
	fds := m.Descriptor().Fields()
	typeURL, value := m.Get(fds.ByNumber(1)).String(), m.Get(fds.ByNumber(2)).Bytes()
	if typeURL == "" {
		if len(value) > 0 {
			return errors.New("google.protobuf.Any: type_url is not set")
		}
		w.s.beginObject()
		w.s.endObject()
		return nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(typeURL)
	if err != nil {
		return fmt.Errorf("google.protobuf.Any: unable to resolve %q: %w", typeURL, err)
	}
	em := mt.New()
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(value, em.Interface()); err != nil {
		return fmt.Errorf("google.protobuf.Any: unable to unmarshal %q: %w", typeURL, err)
	}
	if wkt(em.Descriptor().FullName()) == wktNone {
		return w.fields(em, typeURL)
	}
	w.s.beginObject()
	defer w.s.endObject()
	w.s.key("@type")
	if err := w.str(typeURL, "@type"); err != nil {
		return err
	}
	w.s.key("value")
	return w.message(em)
}

func (w *walker) duration(m protoreflect.Message) error {
	fds := m.Descriptor().Fields()
	return w.durationOut(m.Get(fds.ByNumber(1)).Int(), m.Get(fds.ByNumber(2)).Int())
}

func (w *walker) durationOut(secs, nanos int64) error {
	const maxSeconds = 315576000000
	switch {
	case secs < -maxSeconds || secs > maxSeconds:
		return fmt.Errorf("google.protobuf.Duration: seconds out of range %v", secs)
	case nanos <= -1e9 || nanos >= 1e9:
		return fmt.Errorf("google.protobuf.Duration: nanos out of range %v", nanos)
	case (secs > 0 && nanos < 0) || (secs < 0 && nanos > 0):
		return errors.New("google.protobuf.Duration: signs of seconds and nanos do not match")
	}
	b := w.num[:0]
	if secs < 0 || nanos < 0 {
		b, secs, nanos = append(b, '-'), -secs, -nanos
	}
	b = strconv.AppendInt(b, secs, 10)
	if nanos != 0 {
		// 3, 6 or 9 fractional digits, whichever is enough.
		frac := strconv.AppendInt(nil, 1e9+nanos, 10)
		frac[0] = '.'
		for range 2 {
			if n := len(frac); string(frac[n-3:]) == "000" {
				frac = frac[:n-3]
			}
		}
		b = append(b, frac...)
	}
	b = append(b, 's')
	w.num = b
	w.s.str(string(b))
	return nil
}

// viaProtoJSON prints a well-known type the walker does not format itself
// through protojson, decoded and re-printed with sorted keys.
func (w *walker) viaProtoJSON(m protoreflect.Message) error {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m.Interface())
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	w.value(v)
	return nil
}

// value prints what encoding/json decoded.
func (w *walker) value(v any) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.s.beginObject()
		for _, k := range keys {
			w.s.key(k)
			if k != redactedKey {
				w.value(t[k])
			} else {
				_ = w.redact(func() error { w.value(t[k]); return nil })
			}
		}
		w.s.endObject()
	case []any:
		w.s.beginArray()
		for _, e := range t {
			w.value(e)
		}
		w.s.endArray()
	case string:
		w.s.str(t)
	case json.Number:
		w.s.number([]byte(t))
	case bool:
		w.s.boolean(t)
	default:
		w.s.null()
	}
}

type wktKind int

const (
	wktNone wktKind = iota
	wktAny
	wktDuration
	wktWrapper
	wktStruct
	wktListValue
	wktValue
	wktOther
)

// wkt says how the JSON mapping prints a message type: as a plain message
// (wktNone) or by one of its special forms.
func wkt(name protoreflect.FullName) wktKind {
	if name.Parent() != "google.protobuf" {
		return wktNone
	}
	switch name.Name() {
	case "Any":
		return wktAny
	case "Duration":
		return wktDuration
	case "BoolValue", "Int32Value", "Int64Value", "UInt32Value", "UInt64Value",
		"FloatValue", "DoubleValue", "StringValue", "BytesValue":
		return wktWrapper
	case "Empty":
		// The JSON mapping gives Empty no form of its own: in an Any it
		// is "@type" alone.
		return wktNone
	case "Struct":
		return wktStruct
	case "ListValue":
		return wktListValue
	case "Value":
		return wktValue
	case "Timestamp", "FieldMask":
		return wktOther
	}
	return wktNone
}
