package render

import (
	"encoding/json"

	"google.golang.org/protobuf/proto"
)

// ResourceJSON prints one resource exactly as Encode prints it in a
// "json" document (sorted keys, private keys redacted), for a caller that
// writes a document one resource at a time: the admin endpoint's
// streamed /debug/xds.
func ResourceJSON(m proto.Message) (json.RawMessage, error) { return canonicalJSON(m) }
