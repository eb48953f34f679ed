package xdscheck

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// The field numbers maskInline reads: HttpConnectionManager.route_config,
// RouteConfiguration.name and virtual_hosts, VirtualHost.name.
const (
	hcmRouteConfigField = 4
	rcNameField         = 1
	rcVirtualHostsField = 2
	vhNameField         = 1
)

// maskInline is maskRDS for a connection manager holding its route
// configuration inline, as a gRPC host's server listeners do: each host's
// differs from every other's by the route configuration's name and its
// one virtual host's name only. It appends to dst a key made of every
// byte but those names' (and the lengths that hold them), each part
// length-prefixed so that no two different sets of parts make one key.
// Two encodings with one key decode to messages that differ in those two
// names only. No validation rule reads a route configuration's name;
// a virtual host's must be at least one rune long, which every non-empty
// UTF-8 name is; no reference, header value or client rule inspect
// checks is read from either.
//
// It declines (ok false) unless the message has exactly one route_config
// field, holding the name exactly once before exactly one virtual_hosts
// entry, which holds its name exactly once, all length-delimited and
// well formed, with both names UTF-8 and the virtual host's not empty:
// otherwise a name could decide whether the message decodes or is valid.
func maskInline(dst, b []byte) (key []byte, ok bool) {
	pre, rc, post, ok := onlyField(b, hcmRouteConfigField)
	if !ok {
		return nil, false
	}
	beforeVH, vh, afterVH, ok := onlyField(rc, rcVirtualHostsField)
	if !ok || countField(afterVH, rcNameField) != 0 {
		return nil, false
	}
	beforeName, rcName, betweenNameVH, ok := onlyField(beforeVH, rcNameField)
	if !ok || !utf8.Valid(rcName) {
		return nil, false
	}
	vhPre, vhName, vhPost, ok := onlyField(vh, vhNameField)
	if !ok || len(vhName) == 0 || !utf8.Valid(vhName) {
		return nil, false
	}
	key = dst
	for _, p := range [...][]byte{pre, beforeName, betweenNameVH, vhPre, vhPost, afterVH} {
		key = protowire.AppendVarint(key, uint64(len(p)))
		key = append(key, p...)
	}
	return append(key, post...), true
}

// countField is how many times the well-formed encoded message b holds
// the field numbered num, -1 when b is not well formed.
func countField(b []byte, num protowire.Number) int {
	n := 0
	for len(b) > 0 {
		got, typ, tagLen := protowire.ConsumeTag(b)
		if tagLen < 0 {
			return -1
		}
		valLen := protowire.ConsumeFieldValue(got, typ, b[tagLen:])
		if valLen < 0 {
			return -1
		}
		if got == num {
			n++
		}
		b = b[tagLen+valLen:]
	}
	return n
}
