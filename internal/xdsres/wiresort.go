package xdsres

import (
	"bytes"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// marshalVTSorted encodes m with vtproto's generated code and then puts
// the entries of every map in key order, in place: vtproto writes fields
// in number order and the entries of a map one after the other, in Go's
// map order, so sorting each map's run of entries by key gives the bytes
// marshalSorted writes by walking m. Sorting moves entries of one map
// among themselves and changes no length, so the lengths around them hold.
//
// It reports false when it cannot vouch for the result: m is not a vtproto
// message, a map on the way has keys other than strings, an entry is not
// a key and a value, or a map's entries are not in one run (unknown fields
// holding some after other fields). The caller then encodes with
// marshalSorted. Unknown fields that continue a map's run are sorted with
// it, where marshalSorted leaves them last; the messages Switchyard builds
// have none.
func marshalVTSorted(m proto.Message) ([]byte, bool) {
	vt, ok := m.(vtMarshaler)
	if !ok {
		return nil, false
	}
	p, ok := wirePlanOf(m.ProtoReflect().Descriptor())
	if !ok {
		return nil, false
	}
	b, err := vt.MarshalVTStrict()
	if err != nil {
		return nil, false
	}
	// Without a plan no map lies below m: vtproto's bytes are the sorted
	// ones.
	return b, p == nil || sortWireMaps(b, p)
}

// wirePlan lists the fields of a message type through which a map is
// reached: the only ones marshalVTSorted reads into.
type wirePlan struct {
	fields []wireField
}

type wireField struct {
	num   protowire.Number
	isMap bool
	// next is the plan of the field's message type (of a map's value
	// type), nil when no map lies below it.
	next *wirePlan
}

func (p *wirePlan) field(num protowire.Number) int {
	for i := range p.fields {
		if p.fields[i].num == num {
			return i
		}
	}
	return -1
}

type wirePlanEntry struct {
	plan *wirePlan
	ok   bool
}

var wirePlans sync.Map // protoreflect.MessageDescriptor -> wirePlanEntry

// wirePlanOf returns the plan of md, and false when marshalVTSorted cannot
// sort it (a map below it with keys other than strings, or more fields
// leading to maps than a run's bookkeeping holds).
func wirePlanOf(md protoreflect.MessageDescriptor) (*wirePlan, bool) {
	if e, ok := wirePlans.Load(md); ok {
		return e.(wirePlanEntry).plan, e.(wirePlanEntry).ok
	}
	ok := true
	p := buildWirePlan(md, map[protoreflect.FullName]*wirePlan{}, &ok)
	e, _ := wirePlans.LoadOrStore(md, wirePlanEntry{plan: p, ok: ok})
	return e.(wirePlanEntry).plan, e.(wirePlanEntry).ok
}

// buildWirePlan builds the plan of md, nil when no map lies below it;
// built holds the plans under construction, so that recursive types
// (Struct, Value, ListValue) point back at them.
func buildWirePlan(md protoreflect.MessageDescriptor, built map[protoreflect.FullName]*wirePlan, ok *bool) *wirePlan {
	if p, seen := built[md.FullName()]; seen {
		return p
	}
	if !reachesMap(md, map[protoreflect.FullName]bool{md.FullName(): true}) {
		return nil
	}
	p := &wirePlan{}
	built[md.FullName()] = p
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		f := wireField{num: fd.Number(), isMap: fd.IsMap()}
		child := fd.Message()
		if f.isMap {
			if fd.MapKey().Kind() != protoreflect.StringKind {
				*ok = false
			}
			child = fd.MapValue().Message()
		}
		if child != nil {
			f.next = buildWirePlan(child, built, ok)
		}
		if f.isMap || f.next != nil {
			p.fields = append(p.fields, f)
		}
	}
	if len(p.fields) > 64 {
		*ok = false
	}
	return p
}

// wireEntry is one map entry of a run: its bytes are b[start:end], its
// key b[keyStart:keyEnd].
type wireEntry struct {
	start, end, keyStart, keyEnd int
}

// sortWireMaps sorts, in place, the map entries of the message encoded in
// b (of plan p) and of the messages within it; it reports false when b is
// not what it expects (see marshalVTSorted).
func sortWireMaps(b []byte, p *wirePlan) bool {
	var small [8]wireEntry
	run := small[:0]
	runField := -1
	var done uint64 // the fields whose run has ended
	for i := 0; i < len(b); {
		num, typ, n := protowire.ConsumeTag(b[i:])
		if n < 0 {
			return false
		}
		start := i
		i += n
		fi := p.field(num)
		if fi < 0 || typ != protowire.BytesType {
			if fi >= 0 {
				return false
			}
			if n = protowire.ConsumeFieldValue(num, typ, b[i:]); n < 0 {
				return false
			}
			i += n
			continue
		}
		v, n := protowire.ConsumeBytes(b[i:])
		if n < 0 {
			return false
		}
		vstart := i + n - len(v)
		i += n
		f := p.fields[fi]
		if fi != runField || (len(run) > 0 && run[len(run)-1].end != start) {
			if !flushWireRun(b, run) {
				return false
			}
			if runField >= 0 {
				done |= 1 << runField
			}
			run, runField = run[:0], -1
		}
		if !f.isMap {
			if f.next != nil && !sortWireMaps(b[vstart:i], f.next) {
				return false
			}
			continue
		}
		if done&(1<<fi) != 0 {
			return false
		}
		keyStart, keyEnd, ok := wireEntryParts(b, vstart, i, f.next)
		if !ok {
			return false
		}
		run, runField = append(run, wireEntry{start: start, end: i, keyStart: keyStart, keyEnd: keyEnd}), fi
	}
	return flushWireRun(b, run)
}

// wireEntryParts finds the key of the map entry encoded in b[start:end]
// and sorts the maps in its value (of plan next, when not nil). A missing
// key is the empty string.
func wireEntryParts(b []byte, start, end int, next *wirePlan) (keyStart, keyEnd int, ok bool) {
	keyStart, keyEnd = start, start
	for i := start; i < end; {
		num, typ, n := protowire.ConsumeTag(b[i:end])
		if n < 0 || typ != protowire.BytesType || (num != 1 && num != 2) {
			return 0, 0, false
		}
		i += n
		v, n := protowire.ConsumeBytes(b[i:end])
		if n < 0 {
			return 0, 0, false
		}
		vstart := i + n - len(v)
		i += n
		switch {
		case num == 1:
			keyStart, keyEnd = vstart, i
		case next != nil && !sortWireMaps(b[vstart:i], next):
			return 0, 0, false
		}
	}
	return keyStart, keyEnd, true
}

// flushWireRun puts the entries of one map, which lie one after the other
// in b, in key order.
func flushWireRun(b []byte, run []wireEntry) bool {
	key := func(e wireEntry) []byte { return b[e.keyStart:e.keyEnd] }
	sorted := true
	for i := 1; i < len(run) && sorted; i++ {
		sorted = bytes.Compare(key(run[i-1]), key(run[i])) < 0
	}
	if sorted {
		return true
	}
	from, to := run[0].start, run[len(run)-1].end
	var small [512]byte
	tmp := append(small[:0], b[from:to]...)
	slices.SortFunc(run, func(x, y wireEntry) int { return bytes.Compare(key(x), key(y)) })
	for i := 1; i < len(run); i++ {
		if bytes.Equal(key(run[i-1]), key(run[i])) {
			// A key twice is not a Go map's: leave it to marshalSorted.
			return false
		}
	}
	at := from
	for _, e := range run {
		at += copy(b[at:], tmp[e.start-from:e.end-from])
	}
	return true
}
