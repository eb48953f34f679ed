package render

import (
	"encoding/json"

	"google.golang.org/protobuf/proto"
)

// ResourceJSON prints one resource exactly as Encode prints it in a
// "json" document (sorted keys, private keys redacted), but compact, for a
// caller that writes a document one resource at a time: the admin
// endpoint's streamed /debug/xds.
func ResourceJSON(m proto.Message) (json.RawMessage, error) {
	w := &jsonWriter{}
	if err := (&walker{s: w}).message(m.ProtoReflect()); err != nil {
		return nil, err
	}
	return w.buf, nil
}
