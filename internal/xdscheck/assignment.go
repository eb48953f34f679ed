package xdscheck

import (
	"math"
	"net/netip"
	"unicode/utf8"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// CleanAssignment reports that b, the encoding of a load assignment,
// decodes and that Inspect of the decoded message finds no problem and no
// reference in it. It reads the bytes only, so that the gate need not
// decode the load assignments, which the engine encodes straight from
// their data and which are a third of a build's resources.
//
// It knows the shape the translator gives them — a cluster name, and
// localities of endpoints that are an IP address and a port, with
// weights, priorities and health — and the rules that can fail in it
// (the protos' ValidateAll and ClientRules). Anything else (another
// field, a field given twice, a value it does not check) makes it say
// false, and the caller inspects the decoded message as before: false is
// never a verdict, true always is the full inspection's.
func CleanAssignment(b []byte) bool {
	named := false
	ok := fieldsOnce(b, func(num protowire.Number, v uint64, s []byte) bool {
		switch num {
		case claName:
			named = len(s) > 0 // at least one rune, once it is UTF-8
			return utf8.Valid(s)
		case claEndpoints:
			return cleanLocality(s)
		}
		return false
	}, claEndpoints)
	return ok && named
}

// The numbers of the fields CleanAssignment accepts, by name, each with
// the wire type it must have.
var (
	claName      = bytesField(&envoy_config_endpoint_v3.ClusterLoadAssignment{}, "cluster_name")
	claEndpoints = bytesField(&envoy_config_endpoint_v3.ClusterLoadAssignment{}, "endpoints")

	llbLocality  = bytesField(&envoy_config_endpoint_v3.LocalityLbEndpoints{}, "locality")
	llbEndpoints = bytesField(&envoy_config_endpoint_v3.LocalityLbEndpoints{}, "lb_endpoints")
	llbWeight    = bytesField(&envoy_config_endpoint_v3.LocalityLbEndpoints{}, "load_balancing_weight")
	llbPriority  = varintField(&envoy_config_endpoint_v3.LocalityLbEndpoints{}, "priority")

	lbEndpoint = bytesField(&envoy_config_endpoint_v3.LbEndpoint{}, "endpoint")
	lbHealth   = varintField(&envoy_config_endpoint_v3.LbEndpoint{}, "health_status")
	lbWeight   = bytesField(&envoy_config_endpoint_v3.LbEndpoint{}, "load_balancing_weight")

	endpointAddress = bytesField(&envoy_config_endpoint_v3.Endpoint{}, "address")
	addressSocket   = bytesField(&envoy_config_core_v3.Address{}, "socket_address")

	socketProtocol = varintField(&envoy_config_core_v3.SocketAddress{}, "protocol")
	socketAddress  = bytesField(&envoy_config_core_v3.SocketAddress{}, "address")
	socketPort     = varintField(&envoy_config_core_v3.SocketAddress{}, "port_value")

	localityStrings = []protowire.Number{
		bytesField(&envoy_config_core_v3.Locality{}, "region"),
		bytesField(&envoy_config_core_v3.Locality{}, "zone"),
		bytesField(&envoy_config_core_v3.Locality{}, "sub_zone"),
	}
	wrapperValue = varintField(&wrapperspb.UInt32Value{}, "value")
)

// bytesTag marks a field number as one of wire type bytes, so that a
// field of the right number but another wire type, an unknown field to
// the decoder, matches none of CleanAssignment's.
const bytesTag = 1 << 30

func bytesField(m protoreflect.ProtoMessage, name string) protowire.Number {
	return fieldNumber(m, name) | bytesTag
}

func varintField(m protoreflect.ProtoMessage, name string) protowire.Number {
	return fieldNumber(m, name)
}

func fieldNumber(m protoreflect.ProtoMessage, name string) protowire.Number {
	fd := m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil || fd.Number() >= 64 {
		panic("xdscheck: no field " + name + " below 64 in " + string(m.ProtoReflect().Descriptor().FullName()))
	}
	return fd.Number()
}

// fieldsOnce calls fn on every field of b, tagged with bytesTag when its
// wire type is bytes, with its value: v for a varint, s for bytes. It
// returns false when b is malformed, when a field has another wire type,
// when fn does, or when a field other than the repeated ones appears
// twice: the decoder merges a message given twice and keeps the last of
// a scalar, which is not worth following here.
func fieldsOnce(b []byte, fn func(num protowire.Number, v uint64, s []byte) bool, repeated ...protowire.Number) bool {
	var seen uint64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num >= 64 {
			return false
		}
		b = b[n:]
		var v uint64
		var s []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			s, n = protowire.ConsumeBytes(b)
			num |= bytesTag
		default:
			return false
		}
		if n < 0 {
			return false
		}
		b = b[n:]
		bit := uint64(1) << (num &^ bytesTag)
		if seen&bit != 0 && !contains(repeated, num) {
			return false
		}
		seen |= bit
		if !fn(num, v, s) {
			return false
		}
	}
	return true
}

func contains(nums []protowire.Number, num protowire.Number) bool {
	for _, n := range nums {
		if n == num {
			return true
		}
	}
	return false
}

func cleanLocality(b []byte) bool {
	return fieldsOnce(b, func(num protowire.Number, v uint64, s []byte) bool {
		switch num {
		case llbLocality:
			return fieldsOnce(s, func(num protowire.Number, _ uint64, s []byte) bool {
				return contains(localityStrings, num) && utf8.Valid(s)
			})
		case llbEndpoints:
			return cleanEndpoint(s)
		case llbWeight:
			return cleanWeight(s)
		case llbPriority:
			return v <= 128
		}
		return false
	}, llbEndpoints)
}

// cleanWeight is a load_balancing_weight, which must be at least 1: an
// empty wrapper holds 0.
func cleanWeight(b []byte) bool {
	var w uint64
	return fieldsOnce(b, func(num protowire.Number, v uint64, _ []byte) bool {
		w = v
		return num == wrapperValue
	}) && w >= 1 && w <= math.MaxUint32
}

func cleanEndpoint(b []byte) bool {
	return fieldsOnce(b, func(num protowire.Number, v uint64, s []byte) bool {
		switch num {
		case lbEndpoint:
			return only(s, endpointAddress, func(s []byte) bool {
				return only(s, addressSocket, cleanSocket)
			})
		case lbHealth:
			return true // no rule, and an open enum
		case lbWeight:
			return cleanWeight(s)
		}
		return false
	})
}

// only reports that b holds the one field num, which must be there, and
// that its bytes pass fn.
func only(b []byte, num protowire.Number, fn func([]byte) bool) bool {
	found := false
	return fieldsOnce(b, func(n protowire.Number, _ uint64, s []byte) bool {
		found = true
		return n == num && fn(s)
	}) && found
}

// cleanSocket is an IP address and a port of 1-65535, over TCP or UDP:
// what ValidateAll requires of a socket address (an address, a port, a
// defined protocol) and endpointProblems of an endpoint's.
func cleanSocket(b []byte) bool {
	var addr, port bool
	return fieldsOnce(b, func(num protowire.Number, v uint64, s []byte) bool {
		switch num {
		case socketProtocol:
			_, defined := envoy_config_core_v3.SocketAddress_Protocol_name[int32(v)]
			return v <= math.MaxInt32 && defined
		case socketAddress:
			// A zone (fe80::1%eth0) may be any bytes: UTF-8 is checked
			// apart.
			_, err := netip.ParseAddr(string(s))
			addr = err == nil && utf8.Valid(s)
			return addr
		case socketPort:
			port = v >= 1 && v <= 65535
			return port
		}
		return false
	}) && addr && port
}
