package render_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/render"
)

// FuzzEncodeSameAsReference prints resources of the golden cases, mutated
// at random from a seed — strings that need escaping or fold in YAML,
// special floats, unknown enum numbers, every well-known type, in Anys
// too, private keys in maps and Structs — both ways, and wants the same
// bytes, or an error from both. Its seeds run with every `go test`.
func FuzzEncodeSameAsReference(f *testing.F) {
	corpus := goldenCorpus(f)
	for seed := range 1000 {
		f.Add(uint64(seed))
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		m := proto.Clone(corpus[r.IntN(len(corpus))])
		mutate(r, m.ProtoReflect(), 0)
		url := "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName())
		sameAsReference(t, fmt.Sprintf("seed %d", seed), &render.Output{Resources: map[string][]proto.Message{url: {m}}}, nil)
	})
}

// goldenCorpus lists the resources of every golden case in a fixed
// order, so that a seed picks the same one every run.
func goldenCorpus(t testing.TB) []proto.Message {
	outs := goldenOutputs(t, false)
	var corpus []proto.Message
	for _, name := range slices.Sorted(maps.Keys(outs)) {
		for _, url := range slices.Sorted(maps.Keys(outs[name].Resources)) {
			corpus = append(corpus, outs[name].Resources[url]...)
		}
	}
	return corpus
}

var strs = []string{
	"", "plain", "<b>&amp;</b>", `quote" back\slash`, "tab\tnew\nline\r", "\x01\x08\x0c\x1f\x7f", "\u2028\u2029",
	"ünïcødé ☃", "private_key", "123", "1.5", "true", "null", "~", "- dash", "key: value", "  spaces  ", "#hash", "'single'",
	"@type", "a long string of words, longer than the eighty columns the YAML encoder folds plain scalars at, with spaces",
	"multi\nline\ntext\n", "\xff\xfe", "web.example.com:*", "a:b", "a:", ":a", "*", "a*", "x:y:z", "10.0.0.1", "1.2", "2s", "0.250s",
	"1e3s", "0x1f", "1_000", "12:30", "2001-12-14", "Yes", "OFF", "/", "/api/v1", "a=b+c/d", "-a", ".inf", "v10", "v9",
}

func randString(r *rand.Rand) string { return strs[r.IntN(len(strs))] }

func mutate(r *rand.Rand, m protoreflect.Message, depth int) {
	if special(r, m, depth) {
		return
	}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) && r.IntN(6) != 0 {
			continue
		}
		if r.IntN(10) == 0 {
			m.Clear(fd)
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range r.IntN(3) {
				k := randKey(r, fd.MapKey())
				if fd.MapValue().Message() != nil {
					if depth < 5 {
						mutate(r, mp.Mutable(k).Message(), depth+1)
					}
					continue
				}
				mp.Set(k, randScalar(r, fd.MapValue()))
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			if fd.Message() != nil {
				for j := range l.Len() {
					if depth < 5 && r.IntN(2) == 0 {
						mutate(r, l.Get(j).Message(), depth+1)
					}
				}
				if depth < 5 && r.IntN(3) == 0 {
					e := l.NewElement()
					mutate(r, e.Message(), depth+1)
					l.Append(e)
				}
				continue
			}
			l.Append(randScalar(r, fd))
		case fd.Message() != nil:
			if depth < 5 {
				mutate(r, m.Mutable(fd).Message(), depth+1)
			}
		default:
			m.Set(fd, randScalar(r, fd))
		}
	}
}

// special mutates the well-known types as a whole, valid or not, and
// reports whether m was one.
func special(r *rand.Rand, m protoreflect.Message, depth int) bool {
	var v proto.Message
	switch x := m.Interface().(type) {
	case *anypb.Any:
		inner, err := x.UnmarshalNew()
		if err == nil && r.IntN(3) != 0 && depth < 5 {
			mutate(r, inner.ProtoReflect(), depth+1)
		} else {
			inner = wellKnown(r)
		}
		a, err := anypb.New(inner)
		if err != nil || r.IntN(20) == 0 {
			// What does not encode (a string that is not UTF-8) cannot be
			// packed: an empty Any instead.
			a = &anypb.Any{}
		}
		v = a
	case *durationpb.Duration:
		secs, nanos := r.Int64N(20000)-10000, r.Int32N(2e9)-1e9
		switch r.IntN(4) {
		case 0:
			nanos = nanos / 1e6 * 1e6
		case 1:
			nanos = 0
		}
		if r.IntN(10) != 0 && (secs < 0) != (nanos < 0) {
			nanos = -nanos
		}
		v = &durationpb.Duration{Seconds: secs, Nanos: nanos}
	case *timestamppb.Timestamp, *structpb.Struct, *structpb.Value, *structpb.ListValue, *fieldmaskpb.FieldMask,
		*emptypb.Empty:
		v = sameType(r, x)
	default:
		return false
	}
	proto.Reset(m.Interface())
	proto.Merge(m.Interface(), v)
	return true
}

// wellKnown returns a well-known type, at random.
func wellKnown(r *rand.Rand) proto.Message {
	all := []proto.Message{
		durationpb.New(1500 * 1e6), timestamppb.New(timestamppb.Now().AsTime().Truncate(1000)), &emptypb.Empty{},
		wrapperspb.UInt32(r.Uint32()), wrapperspb.Int64(r.Int64()), wrapperspb.Bool(true), wrapperspb.String(randString(r)),
		wrapperspb.Double(randFloat(r)), wrapperspb.Float(float32(randFloat(r))), wrapperspb.Bytes([]byte(randString(r))),
		randStruct(r, 0), structpb.NewStringValue(randString(r)), &fieldmaskpb.FieldMask{Paths: []string{"a_b", "c.d_e"}},
	}
	return all[r.IntN(len(all))]
}

func sameType(r *rand.Rand, m proto.Message) proto.Message {
	for {
		if w := wellKnown(r); w.ProtoReflect().Descriptor() == m.ProtoReflect().Descriptor() {
			return w
		}
		switch m.(type) {
		case *structpb.Value:
			if r.IntN(5) == 0 {
				return &structpb.Value{} // no kind: an error
			}
			return structpb.NewNumberValue(randFloat(r))
		case *structpb.ListValue:
			if r.IntN(3) == 0 {
				return &structpb.ListValue{}
			}
			l, _ := structpb.NewList([]any{strings.ToValidUTF8(randString(r), "?"), 1.5, true, nil})
			return l
		}
	}
}

func randStruct(r *rand.Rand, depth int) *structpb.Struct {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for range r.IntN(4) {
		var v *structpb.Value
		switch r.IntN(6) {
		case 0:
			v = structpb.NewStringValue(randString(r))
		case 1:
			f := randFloat(r)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				f = 0.25
			}
			v = structpb.NewNumberValue(f)
		case 2:
			v = structpb.NewBoolValue(r.IntN(2) == 0)
		case 3:
			v = structpb.NewNullValue()
		case 4:
			if depth < 3 {
				v = structpb.NewStructValue(randStruct(r, depth+1))
			} else {
				v = structpb.NewStringValue("deep")
			}
		default:
			v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue(randString(r)), structpb.NewNumberValue(3)}})
		}
		s.Fields[strings.ToValidUTF8(randString(r), "?")] = v
	}
	return s
}

func randFloat(r *rand.Rand) float64 {
	fs := []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-7, 1e-6, 9.999e20, 1e21, 123456789.125, 5e-324, math.MaxFloat64,
		float64(float32(0.1)), math.NaN(), math.Inf(1), math.Inf(-1), 100}
	if r.IntN(3) == 0 {
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	}
	return fs[r.IntN(len(fs))]
}

func randKey(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.MapKey {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(randString(r)).MapKey()
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0).MapKey()
	}
	return randScalar(r, fd).MapKey()
}

func randScalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(randString(r))
	case protoreflect.BytesKind:
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return protoreflect.ValueOfBytes(b)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{0, -1, 7, math.MaxInt32, math.MinInt32, r.Int32()}[r.IntN(6)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32([]uint32{0, 1, 80, math.MaxUint32, r.Uint32()}[r.IntN(5)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64([]int64{0, -1, math.MaxInt64, math.MinInt64, r.Int64()}[r.IntN(5)])
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, math.MaxUint64, r.Uint64()}[r.IntN(3)])
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(randFloat(r)))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(randFloat(r))
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if r.IntN(5) == 0 {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(r.Int32N(2000) - 1000))
		}
		return protoreflect.ValueOfEnum(vals.Get(r.IntN(vals.Len())).Number())
	}
	panic(fmt.Sprintf("no random %v", fd.Kind()))
}
