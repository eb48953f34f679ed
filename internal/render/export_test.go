package render

import (
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// ReferenceEncode and ReferenceJSON are the printers of reference_test.go,
// for the tests of package render_test, which read the golden cases.
var (
	ReferenceEncode = referenceEncode
	ReferenceJSON   = referenceJSON
)

// WireJSON prints an encoded resource compact, as ResourceJSON prints it
// decoded, through the wire walker; false when the walker leaves the
// resource to the decoded walk. WireTree does the same for the tree the
// YAML is printed from, and DecodedTree prints that tree decoded.
func WireJSON(r *xdsres.Resource) ([]byte, bool) {
	jw := &jsonWriter{}
	ok := (&walker{s: jw}).fastResource(r)
	return jw.buf, ok
}

func WireTree(r *xdsres.Resource) (any, bool) {
	t := &treeSink{}
	ok := (&walker{s: t}).fastResource(r)
	return t.root, ok
}

func DecodedTree(m proto.Message) (any, error) {
	t := &treeSink{}
	err := (&walker{s: t}).message(m.ProtoReflect())
	return t.root, err
}

// EncodedOutput is an Output holding its resources encoded, as Run
// returns it under Options.Encoded.
func EncodedOutput(byType map[string][]*xdsres.Resource) *Output {
	return &Output{encoded: byType}
}
