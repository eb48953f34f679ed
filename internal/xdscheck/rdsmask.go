package xdscheck

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// hcmType is the type URL of the Anys maskRDS applies to.
const hcmType = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"

// The field numbers maskRDS reads: HttpConnectionManager.rds and
// Rds.route_config_name.
const (
	hcmRDSField      = 3
	rdsRouteConfName = 2
)

// maskRDS splits an encoded HTTP connection manager into its RDS route
// configuration name and a key made of every other byte, appended to dst
// (the caller's buffer, so that a lookup allocates none): a gRPC host's
// listeners hold one connection manager each that differs from every
// other host's by that name only, so cleanAnys, keyed by whole bytes,
// never finds it. Two encodings with one key decode to messages that
// differ in that name only, which no validation rule reads (Rds has none
// on it) and only the connection manager's own reference uses.
//
// It declines (ok false) unless the message has exactly one rds field
// holding exactly one route_config_name, both length-delimited and well
// formed, and the name is UTF-8: otherwise the name could decide whether
// the message decodes at all.
func maskRDS(dst, b []byte) (key []byte, name string, ok bool) {
	pre, rds, post, ok := onlyField(b, hcmRDSField)
	if !ok {
		return nil, "", false
	}
	before, nameBytes, after, ok := onlyField(rds, rdsRouteConfName)
	if !ok || !utf8.Valid(nameBytes) {
		return nil, "", false
	}
	key = protowire.AppendVarint(dst, uint64(len(pre)))
	key = append(key, pre...)
	key = protowire.AppendVarint(key, uint64(len(before)))
	key = append(key, before...)
	key = protowire.AppendVarint(key, uint64(len(after)))
	key = append(key, after...)
	key = append(key, post...)
	return key, string(nameBytes), true
}

// onlyField finds the one field numbered num in the encoded message b,
// which must be length-delimited, and returns the bytes before its tag,
// its value and the bytes after it. It fails when b is not well formed
// or holds the field other than once.
func onlyField(b []byte, num protowire.Number) (pre, value, post []byte, ok bool) {
	found := false
	for rest := b; len(rest) > 0; {
		at := len(b) - len(rest)
		n, typ, tagLen := protowire.ConsumeTag(rest)
		if tagLen < 0 {
			return nil, nil, nil, false
		}
		valLen := protowire.ConsumeFieldValue(n, typ, rest[tagLen:])
		if valLen < 0 {
			return nil, nil, nil, false
		}
		if n == num {
			if found || typ != protowire.BytesType {
				return nil, nil, nil, false
			}
			v, _ := protowire.ConsumeBytes(rest[tagLen:])
			end := at + tagLen + valLen
			pre, value, post, found = b[:at], v, b[end:], true
		}
		rest = rest[tagLen+valLen:]
	}
	return pre, value, post, found
}
