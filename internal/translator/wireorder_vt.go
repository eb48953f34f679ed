//go:build vtprotobuf

package translator

// oneofsLast: vtproto's MarshalVTStrict writes every field by number,
// oneof members included (see wireorder.go).
const oneofsLast = false
