package render

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Decoding a resource to walk it with protoreflect was half of printing
// it: every message allocated, then read back through reflection. The
// engine's encodings are canonical (each field once, in number order, no
// zero scalars, no unknown fields), so the same JSON can be printed
// straight from the wire bytes. The wire walker prints only what it can
// prove the decoded walk prints the same; anything else — a field twice,
// an unknown field, a zero scalar without presence, a string that is not
// UTF-8, a value the decoded walk reports an error for — makes it give up,
// and the resource is printed the decoded way from the start, errors and
// all. TestWireWalkSameAsDecoded holds the two to the same bytes.

// maxWireDepth is how deep the wire walker nests before it leaves a
// resource to the decoded walk, which has protobuf-go's own limit.
const maxWireDepth = 100

// wireOcc is one field occurrence in a message's encoding.
type wireOcc struct {
	rank int32
	fd   protoreflect.FieldDescriptor
	typ  protowire.Type
	// u is a varint or fixed value; v is a length-delimited one.
	u uint64
	v []byte
}

// wireEntry is one map entry, to be printed in key order.
type wireEntry struct {
	key string
	val wireOcc
}

// wireInfo is what the wire walker knows of a message type.
type wireInfo struct {
	// rank is each field's place (by index) in the printed key order.
	rank []int32
	// plain is false for a type whose decoding can fail on what the
	// walker does not check (required fields) or that has more oneofs
	// than it tracks.
	plain bool
}

var wireInfos sync.Map // protoreflect.MessageDescriptor → *wireInfo

func infoOf(md protoreflect.MessageDescriptor) *wireInfo {
	if v, ok := wireInfos.Load(md); ok {
		return v.(*wireInfo)
	}
	fds := md.Fields()
	order := make([]int, fds.Len())
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(fds.Get(a).TextName(), fds.Get(b).TextName()) })
	info := &wireInfo{rank: make([]int32, fds.Len()), plain: md.RequiredNumbers().Len() == 0 && md.Oneofs().Len() <= 64}
	for r, i := range order {
		info.rank[i] = int32(r)
	}
	v, _ := wireInfos.LoadOrStore(md, info)
	return v.(*wireInfo)
}

// fastResource prints an encoded resource from its bytes, reporting false
// (with the sink holding a partial print) when it must be printed decoded.
func (w *walker) fastResource(r *xdsres.Resource) bool {
	if r.Any == nil {
		return false
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(r.Any.GetTypeUrl())
	if err != nil {
		return false
	}
	return w.wireMessage(r.Any.GetValue(), mt.Descriptor(), 0)
}

func (w *walker) wireMessage(b []byte, md protoreflect.MessageDescriptor, depth int) bool {
	if depth > maxWireDepth {
		return false
	}
	switch wkt(md.FullName()) {
	case wktAny:
		return w.wireAny(b, md, depth)
	case wktDuration:
		return w.wireDuration(b, md)
	case wktWrapper:
		return w.wireWrapper(b, md)
	case wktStruct, wktListValue:
		return w.wireOnly(b, md, depth, protoreflect.FieldNumber(1))
	case wktValue:
		return w.wireValue(b, md, depth)
	case wktOther:
		return false
	}
	return w.wireFields(b, md, "", depth)
}

// scan lists the occurrences of b's fields on the scratch stack, in key
// order (a repeated field's in wire order), and reports false for what
// decoding would not read back as one occurrence per populated field.
func (w *walker) scan(b []byte, md protoreflect.MessageDescriptor) (base int, ok bool) {
	info := infoOf(md)
	base = len(w.occs)
	if !info.plain {
		return base, false
	}
	fds := md.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return base, false
		}
		b = b[n:]
		fd := fds.ByNumber(num)
		if fd == nil || fd.Kind() == protoreflect.GroupKind {
			return base, false
		}
		o := wireOcc{rank: info.rank[fd.Index()], fd: fd, typ: typ}
		switch typ {
		case protowire.VarintType:
			o.u, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			o.u = uint64(u)
		case protowire.Fixed64Type:
			o.u, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			o.v, n = protowire.ConsumeBytes(b)
		default:
			return base, false
		}
		if n < 0 || !wireTypeFits(fd, typ) {
			return base, false
		}
		b = b[n:]
		w.occs = append(w.occs, o)
	}
	own := w.occs[base:]
	slices.SortStableFunc(own, func(a, b wireOcc) int { return int(a.rank - b.rank) })
	var oneofs uint64
	for i, o := range own {
		if o.fd.IsList() || o.fd.IsMap() {
			continue
		}
		if i > 0 && own[i-1].fd == o.fd {
			return base, false // a singular field twice: merged or overwritten
		}
		if od := o.fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			bit := uint64(1) << od.Index()
			if oneofs&bit != 0 {
				return base, false
			}
			oneofs |= bit
		}
		if !o.fd.HasPresence() && isZero(o) {
			return base, false
		}
	}
	return base, true
}

// wireTypeFits reports whether decoding reads typ as a value of fd, not
// as an unknown field.
func wireTypeFits(fd protoreflect.FieldDescriptor, typ protowire.Type) bool {
	want := kindWireType(fd.Kind())
	if typ == want {
		return true
	}
	// A packed list.
	return typ == protowire.BytesType && fd.IsList() && want != protowire.BytesType
}

func kindWireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind,
		protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		return protowire.VarintType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return protowire.BytesType
}

// isZero reports whether a singular occurrence holds its type's zero
// value, which decoding keeps as unpopulated for a field without presence.
func isZero(o wireOcc) bool {
	switch o.fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		return len(o.v) == 0
	case protoreflect.MessageKind:
		return false
	}
	return o.u == 0
}

// scalar is the value decoding gives a scalar occurrence, false for what
// the decoded walk would fail on or decoding would not keep.
func scalar(fd protoreflect.FieldDescriptor, typ protowire.Type, u uint64, v []byte) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(u != 0), true
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(int32(u)), true
	case protoreflect.Sint32Kind:
		return protoreflect.ValueOfInt32(int32(protowire.DecodeZigZag(u & math.MaxUint32))), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(u)), true
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(int64(u)), true
	case protoreflect.Sint64Kind:
		return protoreflect.ValueOfInt64(protowire.DecodeZigZag(u)), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(u), true
	case protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(uint32(u))), true
	case protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(u)), true
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(math.Float32frombits(uint32(u))), true
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(math.Float64frombits(u)), true
	case protoreflect.EnumKind:
		n := protoreflect.EnumNumber(int32(u))
		if fd.Enum().IsClosed() && fd.Enum().Values().ByNumber(n) == nil {
			return protoreflect.Value{}, false // decoding keeps it as an unknown field
		}
		return protoreflect.ValueOfEnum(n), true
	case protoreflect.StringKind:
		if !utf8.Valid(v) {
			return protoreflect.Value{}, false
		}
		// The resource's encoding is never modified (xdsres.Resource.Any),
		// so a string may share its bytes for as long as it is printed.
		return protoreflect.ValueOfString(unsafe.String(unsafe.SliceData(v), len(v))), true
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(v), true
	}
	return protoreflect.Value{}, false
}

// wireValueOf prints one value of fd: a message, or a scalar.
func (w *walker) wireValueOf(fd protoreflect.FieldDescriptor, typ protowire.Type, u uint64, v []byte, depth int) bool {
	if fd.Kind() == protoreflect.MessageKind {
		return w.wireMessage(v, fd.Message(), depth+1)
	}
	val, ok := scalar(fd, typ, u, v)
	return ok && w.singular(val, fd) == nil
}

// wireFields prints a plain message, as fields does.
func (w *walker) wireFields(b []byte, md protoreflect.MessageDescriptor, typeURL string, depth int) bool {
	base, ok := w.scan(b, md)
	defer func() { w.occs = w.occs[:base] }()
	if !ok {
		return false
	}
	w.s.beginObject()
	if typeURL != "" {
		// Field names are identifiers, which all sort after "@".
		w.s.key("@type")
		w.s.str(typeURL)
	}
	for i := base; i < len(w.occs); {
		fd := w.occs[i].fd
		j := i + 1
		for j < len(w.occs) && w.occs[j].fd == fd {
			j++
		}
		w.s.key(fd.TextName())
		ok := false
		if fd.TextName() != redactedKey {
			ok = w.wireMember(i, j, depth)
		} else {
			ok = w.wireRedact(func() bool { return w.wireMember(i, j, depth) })
		}
		if !ok {
			return false
		}
		i = j
	}
	w.s.endObject()
	return true
}

// wireRedact prints the placeholder, as redact does, once the value
// walked to nowhere proves printable.
func (w *walker) wireRedact(print func() bool) bool {
	s := w.s
	w.s = discard{}
	ok := print()
	w.s = s
	if !ok {
		return false
	}
	w.placeholder()
	return true
}

// wireMember prints the field of occurrences i..j-1 of the scratch stack.
// The stack may grow while it prints, so it is indexed, not sliced.
func (w *walker) wireMember(i, j, depth int) bool {
	fd := w.occs[i].fd
	switch {
	case fd.IsMap():
		return w.wireMap(i, j, fd, depth)
	case fd.IsList():
		return w.wireList(i, j, fd, depth, false)
	}
	o := w.occs[i]
	return w.wireValueOf(fd, o.typ, o.u, o.v, depth)
}

// wireList prints a list; empty, it prints only where the decoded walk
// prints an empty list (a ListValue), as a field it would not be there.
func (w *walker) wireList(i, j int, fd protoreflect.FieldDescriptor, depth int, emptyOK bool) bool {
	w.s.beginArray()
	n := 0
	for k := i; k < j; k++ {
		o := w.occs[k]
		if o.typ != protowire.BytesType || fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.BytesKind || fd.Kind() == protoreflect.MessageKind {
			if !w.wireValueOf(fd, o.typ, o.u, o.v, depth) {
				return false
			}
			n++
			continue
		}
		if len(o.v) == 0 {
			return false
		}
		for p := o.v; len(p) > 0; n++ {
			u, m := consumePacked(p, kindWireType(fd.Kind()))
			if m < 0 || !w.wireValueOf(fd, kindWireType(fd.Kind()), u, nil, depth) {
				return false
			}
			p = p[m:]
		}
	}
	if n == 0 && !emptyOK {
		return false
	}
	w.s.endArray()
	return true
}

func consumePacked(b []byte, typ protowire.Type) (uint64, int) {
	switch typ {
	case protowire.VarintType:
		return protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		u, n := protowire.ConsumeFixed32(b)
		return uint64(u), n
	}
	return protowire.ConsumeFixed64(b)
}

// wireMap prints a map with string keys, in key order, as mapField does.
func (w *walker) wireMap(i, j int, fd protoreflect.FieldDescriptor, depth int) bool {
	kd, vd := fd.MapKey(), fd.MapValue()
	if kd.Kind() != protoreflect.StringKind {
		return false
	}
	base := len(w.entries)
	defer func() { w.entries = w.entries[:base] }()
	for k := i; k < j; k++ {
		e, ok := wireMapEntry(w.occs[k].v, kd, vd)
		if !ok {
			return false
		}
		w.entries = append(w.entries, e)
	}
	own := w.entries[base:]
	slices.SortFunc(own, func(a, b wireEntry) int { return strings.Compare(a.key, b.key) })
	w.s.beginObject()
	for k := base; k < len(w.entries); k++ {
		e := w.entries[k]
		if k > base && w.entries[k-1].key == e.key {
			return false // decoding keeps the last
		}
		w.s.key(e.key)
		value := func() bool { return w.wireValueOf(vd, e.val.typ, e.val.u, e.val.v, depth) }
		ok := false
		if e.key != redactedKey {
			ok = value()
		} else {
			ok = w.wireRedact(value)
		}
		if !ok {
			return false
		}
	}
	w.s.endObject()
	return true
}

// wireMapEntry reads an entry that holds its key and then its value, as
// the encoders write every entry.
func wireMapEntry(b []byte, kd, vd protoreflect.FieldDescriptor) (wireEntry, bool) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != 1 || typ != protowire.BytesType {
		return wireEntry{}, false
	}
	key, m := protowire.ConsumeBytes(b[n:])
	if m < 0 || !utf8.Valid(key) {
		return wireEntry{}, false
	}
	b = b[n+m:]
	num, typ, n = protowire.ConsumeTag(b)
	if n < 0 || num != 2 || typ != kindWireType(vd.Kind()) {
		return wireEntry{}, false
	}
	e := wireEntry{key: unsafe.String(unsafe.SliceData(key), len(key)), val: wireOcc{fd: vd, typ: typ}}
	b = b[n:]
	switch typ {
	case protowire.VarintType:
		e.val.u, m = protowire.ConsumeVarint(b)
	case protowire.BytesType:
		e.val.v, m = protowire.ConsumeBytes(b)
	default:
		e.val.u, m = consumePacked(b, typ)
	}
	if m < 0 || m != len(b) {
		return wireEntry{}, false
	}
	return e, true
}

// wireAny prints an Any as anyMessage does.
func (w *walker) wireAny(b []byte, md protoreflect.MessageDescriptor, depth int) bool {
	base, ok := w.scan(b, md)
	defer func() { w.occs = w.occs[:base] }()
	if !ok {
		return false
	}
	var url string
	var value []byte
	for _, o := range w.occs[base:] {
		switch o.fd.Number() {
		case 1:
			v, ok := scalar(o.fd, o.typ, o.u, o.v)
			if !ok {
				return false
			}
			url = v.String()
		case 2:
			value = o.v
		}
	}
	if url == "" {
		if len(value) > 0 {
			return false
		}
		w.s.beginObject()
		w.s.endObject()
		return true
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(url)
	if err != nil {
		return false
	}
	emd := mt.Descriptor()
	if wkt(emd.FullName()) == wktNone {
		return w.wireFields(value, emd, url, depth+1)
	}
	w.s.beginObject()
	w.s.key("@type")
	w.s.str(url)
	w.s.key("value")
	if !w.wireMessage(value, emd, depth+1) {
		return false
	}
	w.s.endObject()
	return true
}

// wireDuration prints a Duration as duration does.
func (w *walker) wireDuration(b []byte, md protoreflect.MessageDescriptor) bool {
	base, ok := w.scan(b, md)
	defer func() { w.occs = w.occs[:base] }()
	if !ok {
		return false
	}
	var secs, nanos int64
	for _, o := range w.occs[base:] {
		v, ok := scalar(o.fd, o.typ, o.u, o.v)
		if !ok {
			return false
		}
		if o.fd.Number() == 1 {
			secs = v.Int()
		} else {
			nanos = v.Int()
		}
	}
	return w.durationOut(secs, nanos) == nil
}

// wireWrapper prints a wrapper as its value, the default when unset.
func (w *walker) wireWrapper(b []byte, md protoreflect.MessageDescriptor) bool {
	base, ok := w.scan(b, md)
	defer func() { w.occs = w.occs[:base] }()
	if !ok {
		return false
	}
	fd := md.Fields().ByNumber(1)
	v := fd.Default()
	if len(w.occs) > base {
		o := w.occs[base]
		if v, ok = scalar(o.fd, o.typ, o.u, o.v); !ok {
			return false
		}
	}
	return w.singular(v, fd) == nil
}

// wireOnly prints a message of one field (a Struct's map, a ListValue's
// list) as that field, empty or not.
func (w *walker) wireOnly(b []byte, md protoreflect.MessageDescriptor, depth int, num protoreflect.FieldNumber) bool {
	base, ok := w.scan(b, md)
	defer func() { w.occs = w.occs[:base] }()
	if !ok {
		return false
	}
	fd := md.Fields().ByNumber(num)
	if fd.IsMap() {
		if len(w.occs) == base {
			w.s.beginObject()
			w.s.endObject()
			return true
		}
		return w.wireMap(base, len(w.occs), fd, depth)
	}
	return w.wireList(base, len(w.occs), fd, depth, true)
}

// wireValue prints a google.protobuf.Value as its kind.
func (w *walker) wireValue(b []byte, md protoreflect.MessageDescriptor, depth int) bool {
	base, ok := w.scan(b, md)
	defer func() { w.occs = w.occs[:base] }()
	if !ok || len(w.occs) != base+1 {
		return false // none of the kinds set: the decoded walk's error
	}
	o := w.occs[base]
	if o.fd.Kind() == protoreflect.DoubleKind {
		if f := math.Float64frombits(o.u); math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return w.wireValueOf(o.fd, o.typ, o.u, o.v, depth)
}
