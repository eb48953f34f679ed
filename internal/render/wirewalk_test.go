package render_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestWireWalkSameAsDecoded prints resources from their encoding and
// decoded, and wants the same JSON and the same YAML tree whenever the
// wire walker prints at all: the golden cases' resources as the engine
// encodes them (all of which it must print), the same mutated at random,
// and those encodings perturbed — fields reordered, repeated, zeroed,
// unknown, cut short, strings that are not UTF-8 — where it must give up
// whenever decoding would read something else.
func TestWireWalkSameAsDecoded(t *testing.T) {
	corpus := goldenCorpus(t)
	for i, m := range corpus {
		r := encodeResource(t, m)
		if !sameWireWalk(t, fmt.Sprintf("golden %d", i), r) {
			t.Errorf("golden %d (%s): the wire walker does not print the engine's encoding", i, r.Any.GetTypeUrl())
		}
	}
	seeds := 3000
	if testing.Short() {
		seeds = 300
	}
	printed, perturbed := 0, 0
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
		m := proto.Clone(corpus[r.IntN(len(corpus))])
		mutate(r, m.ProtoReflect(), 0)
		res := encodeResource(t, m)
		if res == nil {
			continue
		}
		if sameWireWalk(t, fmt.Sprintf("seed %d", seed), res) {
			printed++
		}
		for k := range 4 {
			b := perturb(r, res.Any.GetValue(), m.ProtoReflect().Descriptor(), 0)
			p := &xdsres.Resource{Name: res.Name, Any: &anypb.Any{TypeUrl: res.Any.GetTypeUrl(), Value: b}}
			if sameWireWalk(t, fmt.Sprintf("seed %d perturbed %d", seed, k), p) {
				perturbed++
			}
		}
	}
	t.Logf("%d of %d mutated and %d of %d perturbed resources printed from their encoding", printed, seeds, perturbed, 4*seeds)
	if printed < seeds/2 || perturbed == 0 {
		t.Errorf("the wire walker printed too few: %d mutated, %d perturbed", printed, perturbed)
	}
}

// encodeResource encodes m as the engine does, nil when it does not
// encode (a string that is not UTF-8, without vtprotobuf).
func encodeResource(t *testing.T, m proto.Message) *xdsres.Resource {
	b, err := xdsres.Marshal(m)
	if err != nil {
		return nil
	}
	return &xdsres.Resource{Name: "r", Any: &anypb.Any{TypeUrl: "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName()), Value: b}}
}

// sameWireWalk fails the test when the wire walker prints r differently
// from the decoded walk, or prints what the decoded walk cannot, and
// reports whether it printed.
func sameWireWalk(t *testing.T, name string, r *xdsres.Resource) bool {
	t.Helper()
	got, ok := render.WireJSON(r)
	tree, treeOK := render.WireTree(r)
	if ok != treeOK {
		t.Fatalf("%s: printed as JSON %v, as a tree %v", name, ok, treeOK)
	}
	if !ok {
		return false
	}
	m := r.Decoded()
	if m == nil {
		t.Fatalf("%s: printed from an encoding that does not decode:\n%s", name, got)
	}
	want, err := render.ResourceJSON(m)
	if err != nil {
		t.Fatalf("%s: printed what the decoded walk fails on (%v):\n%s", name, err, got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: differs from the decoded walk:\n%s", name, diffContext(got, want))
	}
	wantTree, err := render.DecodedTree(m)
	if err != nil || !reflect.DeepEqual(tree, wantTree) {
		t.Fatalf("%s: tree differs from the decoded walk's (error %v)", name, err)
	}
	return true
}

// perturb changes an encoding at random, here or in a nested message,
// into one that may or may not decode to what it did.
func perturb(r *rand.Rand, b []byte, md protoreflect.MessageDescriptor, depth int) []byte {
	type field struct {
		num protowire.Number
		typ protowire.Type
		raw []byte // the whole field, tag included
		val []byte // a length-delimited field's value
	}
	var fields []field
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return b
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return b
		}
		f := field{num: num, typ: typ, raw: rest[:n+m]}
		if typ == protowire.BytesType {
			f.val, _ = protowire.ConsumeBytes(rest[n:])
		}
		fields = append(fields, f)
		rest = rest[n+m:]
	}
	for i, f := range fields {
		fd := md.Fields().ByNumber(f.num)
		if fd == nil || f.typ != protowire.BytesType || depth > 6 || r.IntN(3) != 0 {
			continue
		}
		var val []byte
		switch {
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			val = perturb(r, f.val, fd.Message(), depth+1)
		case fd.IsMap():
			val = perturbEntry(r, f.val, fd, depth)
		case fd.Kind() == protoreflect.StringKind && r.IntN(4) == 0:
			val = append([]byte("\xff"), f.val...)
		default:
			continue
		}
		fields[i].raw = protowire.AppendBytes(protowire.AppendTag(nil, f.num, f.typ), val)
	}
	if len(fields) > 0 && r.IntN(2) == 0 {
		i := r.IntN(len(fields))
		switch r.IntN(6) {
		case 0: // a field twice
			fields = append(fields, fields[i])
		case 1: // fields out of order
			j := r.IntN(len(fields))
			fields[i], fields[j] = fields[j], fields[i]
		case 2: // an unknown field
			fields = append(fields, field{raw: protowire.AppendVarint(protowire.AppendTag(nil, 536870000, protowire.VarintType), 1)})
		case 3: // cut short
			fields[i].raw = fields[i].raw[:len(fields[i].raw)-1]
		case 4: // a field that is not there
			fields = fields[:i+copy(fields[i:], fields[i+1:])]
		}
	}
	if r.IntN(4) == 0 && md.Fields().Len() > 0 {
		// A zero value, possibly of the wrong wire type.
		fd := md.Fields().Get(r.IntN(md.Fields().Len()))
		typ := []protowire.Type{protowire.VarintType, protowire.BytesType, protowire.Fixed32Type, protowire.Fixed64Type}[r.IntN(4)]
		raw := protowire.AppendTag(nil, fd.Number(), typ)
		switch typ {
		case protowire.VarintType:
			raw = protowire.AppendVarint(raw, 0)
		case protowire.BytesType:
			raw = protowire.AppendBytes(raw, nil)
		case protowire.Fixed32Type:
			raw = protowire.AppendFixed32(raw, 0)
		default:
			raw = protowire.AppendFixed64(raw, 0)
		}
		fields = append(fields, field{raw: raw})
	}
	var out []byte
	for _, f := range fields {
		out = append(out, f.raw...)
	}
	return out
}

// perturbEntry changes a map entry: its key made not UTF-8, its value
// perturbed, or a field of it dropped or repeated.
func perturbEntry(r *rand.Rand, b []byte, fd protoreflect.FieldDescriptor, depth int) []byte {
	var out []byte
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		m := protowire.ConsumeFieldValue(num, typ, rest[max(n, 0):])
		if n < 0 || m < 0 {
			return b
		}
		raw := rest[:n+m]
		rest = rest[n+m:]
		if typ == protowire.BytesType {
			val, _ := protowire.ConsumeBytes(raw[n:])
			switch {
			case num == 1 && fd.MapKey().Kind() == protoreflect.StringKind && r.IntN(3) == 0:
				raw = protowire.AppendBytes(protowire.AppendTag(nil, num, typ), append([]byte("\xff"), val...))
			case num == 2 && fd.MapValue().Kind() == protoreflect.MessageKind:
				raw = protowire.AppendBytes(protowire.AppendTag(nil, num, typ), perturb(r, val, fd.MapValue().Message(), depth+1))
			}
		}
		switch r.IntN(8) {
		case 0:
			continue
		case 1:
			out = append(out, raw...)
		}
		out = append(out, raw...)
	}
	return out
}

// TestWireWalkOddEncodings prints encodings no encoder writes but
// decoding reads, of a Struct, a Value and a Duration: map entries with a
// field missing, repeated or out of order, keys twice, values of no kind.
// The wire walker must print them as decoding reads them, or give up.
func TestWireWalkOddEncodings(t *testing.T) {
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), []byte(s))
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	value := func(s string) []byte { return str(2, string(str(3, s))) } // a map entry's Value holding a string
	entry := func(bs ...[]byte) []byte { return str(1, string(cat(bs...))) }
	cases := map[string][]byte{
		"plain":               entry(str(1, "a"), value("x")),
		"value twice":         entry(str(1, "a"), value("x"), value("y")),
		"key twice":           entry(str(1, "a"), str(1, "b"), value("x")),
		"value first":         entry(value("x"), str(1, "a")),
		"no value":            entry(str(1, "a")),
		"no key":              entry(value("x")),
		"empty entry":         entry(),
		"same key twice":      cat(entry(str(1, "a"), value("x")), entry(str(1, "a"), value("y"))),
		"key not UTF-8":       entry(str(1, "\xff"), value("x")),
		"value of no kind":    entry(str(1, "a"), str(2, "")),
		"value of two kinds":  entry(str(1, "a"), str(2, string(cat(str(3, "s"), protowire.AppendVarint(protowire.AppendTag(nil, 4, protowire.VarintType), 1))))),
		"value string twice":  entry(str(1, "a"), str(2, string(cat(str(3, "s"), str(3, "t"))))),
		"unknown entry field": entry(str(1, "a"), value("x"), str(3, "z")),
		"entries unsorted":    cat(entry(str(1, "b"), value("x")), entry(str(1, "a"), value("y"))),
		"no entries":          nil,
	}
	for name, b := range cases {
		r := &xdsres.Resource{Name: "r", Any: &anypb.Any{TypeUrl: "type.googleapis.com/google.protobuf.Struct", Value: b}}
		sameWireWalk(t, name, r)
	}
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	durations := map[string][]byte{
		"plain": cat(varint(1, 3), varint(2, 5e8)), "negative": cat(varint(1, uint64(1<<64-3)), varint(2, uint64(1<<64-5e8))),
		"signs differ": cat(varint(1, 3), varint(2, uint64(1<<64-5))), "nanos too large": varint(2, 2e9),
		"zero seconds": cat(varint(1, 0), varint(2, 5)), "seconds twice": cat(varint(1, 3), varint(1, 4)),
	}
	for name, b := range durations {
		sameWireWalk(t, "duration "+name, &xdsres.Resource{Name: "r", Any: &anypb.Any{TypeUrl: "type.googleapis.com/google.protobuf.Duration", Value: b}})
	}
}
