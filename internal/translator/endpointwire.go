package translator

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/encoding/protowire"
)

// The field numbers of what a load assignment holds, from Envoy's protos
// (envoy/config/endpoint/v3/endpoint.proto, endpoint_components.proto,
// envoy/config/core/v3/address.proto, base.proto).
const (
	claClusterName  protowire.Number = 1 // ClusterLoadAssignment.cluster_name
	claEndpoints    protowire.Number = 2 // ClusterLoadAssignment.endpoints
	lleLocality     protowire.Number = 1 // LocalityLbEndpoints.locality
	lleLbEndpoints  protowire.Number = 2 // LocalityLbEndpoints.lb_endpoints
	lleWeight       protowire.Number = 3 // LocalityLbEndpoints.load_balancing_weight
	llePriority     protowire.Number = 5 // LocalityLbEndpoints.priority
	localityZone    protowire.Number = 2 // Locality.zone
	localitySubZone protowire.Number = 3 // Locality.sub_zone
	lbEndpoint      protowire.Number = 1 // LbEndpoint.endpoint
	lbHealthStatus  protowire.Number = 2 // LbEndpoint.health_status
	epAddress       protowire.Number = 1 // Endpoint.address
	epHealthCheck   protowire.Number = 2 // Endpoint.health_check_config
	hcPortValue     protowire.Number = 1 // Endpoint.HealthCheckConfig.port_value
	addrSocket      protowire.Number = 1 // Address.socket_address
	saAddress       protowire.Number = 2 // SocketAddress.address
	saPortValue     protowire.Number = 3 // SocketAddress.port_value
	wrapperValue    protowire.Number = 1 // UInt32Value.value
)

// errInvalidUTF8 is what Encode returns for a string protobuf-go would not
// encode either: Envoy rejects a resource holding one.
var errInvalidUTF8 = errors.New("invalid UTF-8")

// Encode returns the encoding of a.Message(name), exactly as
// xdsres.Marshal writes it (fields in number order, oneof members as the
// build's encoder places them (oneofsLast), zero scalars left out, a set
// message written even when empty, a oneof's scalar even when zero),
// without building a message: a build makes tens of thousands of
// load assignments, whose messages were most of its garbage. The bytes
// take one allocation, of the exact size.
func (a *Assignment) Encode(name string) ([]byte, error) {
	if err := a.checkUTF8(name); err != nil {
		return nil, err
	}
	size := sizeString(claClusterName, name)
	for i := range a.localities {
		size += sizeMessage(claEndpoints, a.localities[i].size())
	}
	b := make([]byte, 0, size)
	b = appendString(b, claClusterName, name)
	for i := range a.localities {
		b = a.localities[i].appendTo(b)
	}
	return b, nil
}

// checkUTF8 fails when a string of the assignment named name is not UTF-8.
func (a *Assignment) checkUTF8(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("cluster_name: %w", errInvalidUTF8)
	}
	for i := range a.localities {
		l := &a.localities[i]
		if !utf8.ValidString(l.zone) || !utf8.ValidString(l.service.Namespace) || !utf8.ValidString(l.service.Name) {
			return fmt.Errorf("locality %q: %w", l.subZone(), errInvalidUTF8)
		}
		for _, ep := range l.endpoints {
			if !utf8.ValidString(ep.addr.host) {
				return fmt.Errorf("endpoint address %q: %w", ep.addr.host, errInvalidUTF8)
			}
		}
	}
	return nil
}

// size is the encoded size of the locality's LocalityLbEndpoints.
func (l *locality) size() int {
	n := sizeMessage(lleLocality, l.localitySize())
	for i := range l.endpoints {
		n += sizeMessage(lleLbEndpoints, endpointSize(&l.endpoints[i]))
	}
	n += sizeMessage(lleWeight, sizeVarint(wrapperValue, uint64(l.weight)))
	return n + sizeVarint(llePriority, uint64(l.priority))
}

// appendTo appends the locality as field claEndpoints of its assignment.
func (l *locality) appendTo(b []byte) []byte {
	b = appendMessageHeader(b, claEndpoints, l.size())
	b = appendMessageHeader(b, lleLocality, l.localitySize())
	b = appendString(b, localityZone, l.zone)
	b = protowire.AppendTag(b, localitySubZone, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(l.subZoneLen()))
	b = append(b, l.service.Namespace...)
	b = append(b, '/')
	b = append(b, l.service.Name...)
	if l.withPort {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(l.port), 10)
	}
	for i := range l.endpoints {
		b = appendEndpoint(b, &l.endpoints[i])
	}
	b = appendMessageHeader(b, lleWeight, sizeVarint(wrapperValue, uint64(l.weight)))
	b = appendVarint(b, wrapperValue, uint64(l.weight))
	return appendVarint(b, llePriority, uint64(l.priority))
}

// localitySize is the encoded size of the locality's Locality message.
func (l *locality) localitySize() int {
	return sizeString(localityZone, l.zone) + protowire.SizeTag(localitySubZone) + protowire.SizeBytes(l.subZoneLen())
}

// subZoneLen is len(l.subZone()), without building it.
func (l *locality) subZoneLen() int {
	n := len(l.service.Namespace) + 1 + len(l.service.Name)
	if l.withPort {
		var digits [12]byte
		n += 1 + len(strconv.AppendInt(digits[:0], int64(l.port), 10))
	}
	return n
}

// The sizes of an endpoint's nested messages, as lbEndpoints builds them:
// LbEndpoint{endpoint: Endpoint{address: Address{socket_address:
// SocketAddress{address, port_value}}, health_check_config}, health_status}.
// The protocol is TCP, the zero value, so it is not written.

func socketAddressSize(ep *endpoint) int {
	return sizeString(saAddress, ep.addr.host) + protowire.SizeTag(saPortValue) + protowire.SizeVarint(uint64(uint32(ep.addr.port)))
}

func endpointMessageSize(ep *endpoint) int {
	n := sizeMessage(epAddress, sizeMessage(addrSocket, socketAddressSize(ep)))
	if ep.healthPort != 0 {
		n += sizeMessage(epHealthCheck, sizeVarint(hcPortValue, uint64(uint32(ep.healthPort))))
	}
	return n
}

func endpointSize(ep *endpoint) int {
	return sizeMessage(lbEndpoint, endpointMessageSize(ep)) + sizeVarint(lbHealthStatus, uint64(ep.health))
}

// appendEndpoint appends the endpoint as field lleLbEndpoints of its
// locality.
func appendEndpoint(b []byte, ep *endpoint) []byte {
	b = appendMessageHeader(b, lleLbEndpoints, endpointSize(ep))
	if oneofsLast {
		b = appendVarint(b, lbHealthStatus, uint64(ep.health))
	}
	b = appendMessageHeader(b, lbEndpoint, endpointMessageSize(ep))
	sa := socketAddressSize(ep)
	b = appendMessageHeader(b, epAddress, sizeMessage(addrSocket, sa))
	b = appendMessageHeader(b, addrSocket, sa)
	b = appendString(b, saAddress, ep.addr.host)
	// A oneof's member is written even when zero.
	b = protowire.AppendTag(b, saPortValue, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(uint32(ep.addr.port)))
	if ep.healthPort != 0 {
		hp := uint64(uint32(ep.healthPort))
		b = appendMessageHeader(b, epHealthCheck, sizeVarint(hcPortValue, hp))
		b = appendVarint(b, hcPortValue, hp)
	}
	if !oneofsLast {
		b = appendVarint(b, lbHealthStatus, uint64(ep.health))
	}
	return b
}

// sizeString is the size of a string field, left out when empty.
func sizeString(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// sizeVarint is the size of a scalar field, left out when zero.
func sizeVarint(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// sizeMessage is the size of a set message field of the given size.
func sizeMessage(num protowire.Number, size int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(size)
}

func appendMessageHeader(b []byte, num protowire.Number, size int) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(size))
}

// RenameLoadAssignment returns the encoding of the load assignment
// encoded in b under another cluster name: the name is its first field,
// so the rest of the bytes is kept as it is. The DNS group serves each
// DNS name the assignment of the cluster behind it this way.
func RenameLoadAssignment(b []byte, name string) ([]byte, error) {
	if !utf8.ValidString(name) {
		return nil, fmt.Errorf("cluster_name: %w", errInvalidUTF8)
	}
	rest := b
	if num, typ, n := protowire.ConsumeTag(b); n > 0 && num == claClusterName && typ == protowire.BytesType {
		if _, m := protowire.ConsumeBytes(b[n:]); m > 0 {
			rest = b[n+m:]
		}
	}
	out := make([]byte, 0, sizeString(claClusterName, name)+len(rest))
	out = appendString(out, claClusterName, name)
	return append(out, rest...), nil
}

// GRPC returns the assignment GRPCLoadAssignment serves gRPC clients: a
// itself when it holds no duplicate to drop (so that the two groups share
// one encoding), else a deduplicated copy, made by the same rules. Neither
// may be modified afterwards.
func (a *Assignment) GRPC() *Assignment {
	if !a.hasDuplicates() {
		return a
	}
	ls := slices.Clone(a.localities)
	slices.SortStableFunc(ls, func(x, y locality) int { return cmp.Compare(x.priority, y.priority) })
	localities := map[localityKey]bool{}
	addresses := map[addressKey]bool{}
	kept := ls[:0]
	for _, l := range ls {
		lk := l.key()
		if localities[lk] {
			continue
		}
		localities[lk] = true
		eps := make([]endpoint, 0, len(l.endpoints))
		for _, ep := range l.endpoints {
			if k := (addressKey{ep.addr.host, ep.addr.port}); !addresses[k] {
				addresses[k] = true
				eps = append(eps, ep)
			}
		}
		if before, after := healthyCount(l.endpoints), healthyCount(eps); after < before {
			w := uint64(l.weight) * uint64(after) / uint64(before)
			l.weight = uint32(max(w, 1))
		}
		l.endpoints = eps
		kept = append(kept, l)
	}
	return &Assignment{localities: kept}
}

// addressKey is the address gRPC dials for an endpoint, compared as
// endpointAddress compares messages.
type addressKey struct {
	host string
	port int32
}

func (l *locality) key() localityKey {
	return localityKey{priority: l.priority, zone: l.zone, subZone: l.subZone()}
}

// hasDuplicates reports whether GRPC would change a: its localities are
// out of priority order, or a locality or an address appears twice.
func (a *Assignment) hasDuplicates() bool {
	ls := a.localities
	n := 0
	for i := range ls {
		if i > 0 && ls[i].priority < ls[i-1].priority {
			return true
		}
		// A priority has a few localities: comparing them pairwise is
		// cheaper than a map.
		for j := range i {
			if ls[j].priority == ls[i].priority && ls[j].zone == ls[i].zone && ls[j].service == ls[i].service &&
				ls[j].withPort == ls[i].withPort && (!ls[j].withPort || ls[j].port == ls[i].port) {
				return true
			}
		}
		n += len(ls[i].endpoints)
	}
	if n > 64 {
		seen := make(map[addressKey]bool, n)
		for i := range ls {
			for _, ep := range ls[i].endpoints {
				k := addressKey{ep.addr.host, ep.addr.port}
				if seen[k] {
					return true
				}
				seen[k] = true
			}
		}
		return false
	}
	// So are most assignments' endpoints, on the stack.
	var stack [64]addressKey
	seen := stack[:0]
	for i := range ls {
		for _, ep := range ls[i].endpoints {
			k := addressKey{ep.addr.host, ep.addr.port}
			if slices.Contains(seen, k) {
				return true
			}
			seen = append(seen, k)
		}
	}
	return false
}

func healthyCount(eps []endpoint) int {
	n := 0
	for _, ep := range eps {
		if ep.health == envoy_config_core_v3.HealthStatus_HEALTHY {
			n++
		}
	}
	return n
}
