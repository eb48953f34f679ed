package xdscheck

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_filter_network_tcp_proxy_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// seen are the messages visit shows its callers besides the packed ones:
// those refsOf finds references in and the header values inspect checks.
// A type added to either must be added here, or visit never reaches it.
var seen = []proto.Message{
	(*envoy_config_route_v3.RouteAction)(nil),
	(*envoy_filter_network_tcp_proxy_v3.TcpProxy)(nil),
	(*envoy_config_core_v3.GrpcService_EnvoyGrpc)(nil),
	(*envoy_transport_socket_tls_v3.SdsSecretConfig)(nil),
	(*envoy_filter_network_http_connection_manager_v3.HttpConnectionManager)(nil),
	(*envoy_config_route_v3.ScopedRouteConfiguration)(nil),
	(*envoy_config_cluster_v3.Cluster)(nil),
	(*envoy_config_core_v3.HeaderValue)(nil),
}

var anyName = (*anypb.Any)(nil).ProtoReflect().Descriptor().FullName()

// visit calls fn on m, on every message packed in an Any inside it, at
// any depth (packed is true for those and m), and on every message of a
// type in seen inside them. An Any that does not unmarshal is reported to
// bad. Messages are walked in field declaration order, map entries in the
// order of their keys.
//
// It walks only the fields that can lead to a message it shows or to an
// Any (plans), which is what makes the gate's checks cheap: most of a
// load assignment or a route is addresses, matchers and numbers, which
// ValidateAll of the packed message covers already.
func visit(m proto.Message, fn func(msg proto.Message, packed bool), bad func(error)) {
	visitMemo(m, fn, bad, nil)
}

// anyMemo lets visit skip the content of an Any: known reports that the
// caller has accounted for it; mark and seen bracket the visit of one it
// did not, so that the caller can remember what it found.
type anyMemo interface {
	known(a *anypb.Any) bool
	mark() [2]int
	seen(a *anypb.Any, inner proto.Message, at [2]int)
}

// visitMemo is visit, asking memo (unless nil) before unpacking an Any.
func visitMemo(m proto.Message, fn func(msg proto.Message, packed bool), bad func(error), memo anyMemo) {
	fn(m, true)
	pm := m.ProtoReflect()
	walk(pm, planOf(pm.Descriptor()), fn, bad, memo)
}

func walk(pm protoreflect.Message, p *plan, fn func(proto.Message, bool), bad func(error), memo anyMemo) {
	for _, f := range p.fields {
		fd := f.fd
		if !pm.Has(fd) {
			continue
		}
		v := pm.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				enter(l.Get(i).Message(), f.plan, fn, bad, memo)
			}
		case fd.IsMap():
			rangeSorted(v.Map(), func(mv protoreflect.Value) {
				enter(mv.Message(), f.plan, fn, bad, memo)
			})
		default:
			enter(v.Message(), f.plan, fn, bad, memo)
		}
	}
}

// rangeSorted calls fn on the values of m in the order of their keys, so
// that the problems found in a map (typed_per_filter_config) are reported
// in the same order every time: Range's order is random, and a condition
// whose message changes from one build to the next looks like a change.
// A map of one entry, the common case on the gate's path, is not sorted.
func rangeSorted(m protoreflect.Map, fn func(protoreflect.Value)) {
	if m.Len() < 2 {
		m.Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
			fn(v)
			return true
		})
		return
	}
	keys := make([]protoreflect.MapKey, 0, m.Len())
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range keys {
		fn(m.Get(k))
	}
}

func enter(x protoreflect.Message, p *plan, fn func(proto.Message, bool), bad func(error), memo anyMemo) {
	if !p.any {
		if p.show {
			fn(x.Interface(), false)
		}
		walk(x, p, fn, bad, memo)
		return
	}
	a, ok := x.Interface().(*anypb.Any)
	if !ok {
		bad(fmt.Errorf("%s is not an anypb.Any", x.Descriptor().FullName()))
		return
	}
	var at [2]int
	if memo != nil {
		if memo.known(a) {
			return
		}
		at = memo.mark()
	}
	inner, err := a.UnmarshalNew()
	if err != nil {
		bad(fmt.Errorf("typed_config %s: %w", a.GetTypeUrl(), err))
		return
	}
	fn(inner, true)
	ipm := inner.ProtoReflect()
	walk(ipm, planOf(ipm.Descriptor()), fn, bad, memo)
	if memo != nil {
		memo.seen(a, inner, at)
	}
}

// plan is how visit walks messages of one type: whether it shows them to
// its callers, whether they are Anys to unpack, and the fields that can
// lead to either (with their message type's plan), in declaration order.
type plan struct {
	show, any bool
	fields    []fieldPlan
}

type fieldPlan struct {
	fd   protoreflect.FieldDescriptor
	plan *plan
}

// plans holds a plan per message descriptor, for every type reached so
// far; they depend on the types only, so they are made once.
var plans sync.Map // protoreflect.FullName -> *plan

func planOf(d protoreflect.MessageDescriptor) *plan {
	if p, ok := plans.Load(d.FullName()); ok {
		return p.(*plan)
	}
	makePlans(d)
	p, _ := plans.Load(d.FullName())
	return p.(*plan)
}

// makePlans makes the plans of d and of every type reachable from it.
// A type leads somewhere when a field's type is shown, is an Any or
// leads somewhere; types refer to each other in cycles, so that is worked
// out to a fixed point over all of them.
func makePlans(root protoreflect.MessageDescriptor) {
	show := map[protoreflect.FullName]bool{}
	for _, m := range seen {
		show[m.ProtoReflect().Descriptor().FullName()] = true
	}
	byName := map[protoreflect.FullName]protoreflect.MessageDescriptor{}
	var order []protoreflect.MessageDescriptor
	for stack := []protoreflect.MessageDescriptor{root}; len(stack) > 0; {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := byName[d.FullName()]; ok {
			continue
		}
		byName[d.FullName()] = d
		order = append(order, d)
		if d.FullName() == anyName {
			continue // unpacked, not walked
		}
		fields := d.Fields()
		for i := range fields.Len() {
			if md := fieldMessage(fields.Get(i)); md != nil {
				stack = append(stack, md)
			}
		}
	}
	leads := map[protoreflect.FullName]bool{}
	for _, d := range order {
		leads[d.FullName()] = show[d.FullName()] || d.FullName() == anyName
	}
	for changed := true; changed; {
		changed = false
		for _, d := range order {
			if leads[d.FullName()] {
				continue
			}
			fields := d.Fields()
			for i := range fields.Len() {
				if md := fieldMessage(fields.Get(i)); md != nil && leads[md.FullName()] {
					leads[d.FullName()], changed = true, true
					break
				}
			}
		}
	}
	made := map[protoreflect.FullName]*plan{}
	for _, d := range order {
		made[d.FullName()] = &plan{show: show[d.FullName()], any: d.FullName() == anyName}
	}
	for _, d := range order {
		p := made[d.FullName()]
		if p.any {
			continue
		}
		fields := d.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if md := fieldMessage(fd); md != nil && leads[md.FullName()] {
				p.fields = append(p.fields, fieldPlan{fd: fd, plan: made[md.FullName()]})
			}
		}
	}
	for _, d := range order {
		plans.LoadOrStore(d.FullName(), made[d.FullName()])
	}
}

// fieldMessage is the message type of a field's values, nil for a field
// of scalars.
func fieldMessage(fd protoreflect.FieldDescriptor) protoreflect.MessageDescriptor {
	if fd.IsMap() {
		return fd.MapValue().Message()
	}
	return fd.Message()
}
