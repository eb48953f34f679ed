//go:build !vtprotobuf

package translator

// oneofsLast is how xdsres.Marshal orders a message's fields in this
// build: protobuf-go's encoder writes the fields outside a oneof first,
// by number, and the members of oneofs after them; vtproto's (the
// vtprotobuf build, wireorder_vt.go) writes every field by number. Of the
// messages Encode writes only LbEndpoint is affected: its endpoint is a
// oneof member, field 1, and its health_status field 2.
const oneofsLast = true
