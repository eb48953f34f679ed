package xdscheck

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Decodes reports whether b, an encoding of a message of type d, would
// decode: its wire format is well formed and every string in it, at any
// depth short of the Anys, is UTF-8. A resource inspected from the
// message it was encoded from (Inspect skips the UTF-8 check) has the
// inspection of its decoded self when this holds: the fast encoder lets
// strings that are not UTF-8 through, and the decoder refuses them.
//
// It is stricter than the decoder where that is simpler (strings of
// every syntax are checked), never more lenient.
func Decodes(d protoreflect.MessageDescriptor, b []byte) bool {
	fields := d.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return false
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		fd := fields.ByNumber(num)
		switch {
		case fd == nil:
		case fd.Kind() == protoreflect.StringKind:
			if !utf8.Valid(v) {
				return false
			}
		case fd.Kind() == protoreflect.MessageKind:
			if !Decodes(fd.Message(), v) {
				return false
			}
		}
	}
	return true
}
