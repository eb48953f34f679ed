// Package xdscheck checks a set of xDS resources the way a client would
// before accepting it: every resource passes its protos' own ValidateAll,
// nested typed_configs included, and every name one resource uses to refer
// to another (a route's cluster, a cluster's load assignment, a scope's
// route configuration, a TLS context's secret) resolves inside the set.
//
// It exists for the translator's golden test and for the tests that
// cannot enumerate their inputs — the fuzz targets, the isolation
// property, the soak — so that each of them asserts the same thing
// DESIGN.md decision 6 promises: the control plane never pushes a resource
// a client would reject.
package xdscheck

import (
	"fmt"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// Validate runs ValidateAll on m and on every message packed in an Any
// inside it, at any depth: protoc-gen-validate stops at Any, Envoy does not.
// An Any that does not unmarshal is an error too, and so is a string that
// is not UTF-8, which the fast marshaller the cache uses lets through and
// every client's parser rejects. Header values must be Envoy format
// strings (see FormatString).
func Validate(m proto.Message) []error {
	var errs []error
	if _, err := proto.Marshal(m); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", m.ProtoReflect().Descriptor().FullName(), err))
	}
	visit(m, func(msg proto.Message, packed bool) {
		if hv, ok := msg.(*envoy_config_core_v3.HeaderValue); ok {
			if err := FormatString(hv.GetValue()); err != nil {
				errs = append(errs, fmt.Errorf("header %s: %w", hv.GetKey(), err))
			}
		}
		if !packed {
			return // ValidateAll of the message holding it covered it
		}
		name := msg.ProtoReflect().Descriptor().FullName()
		v, ok := msg.(interface{ ValidateAll() error })
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s has no ValidateAll", name))
		default:
			if err := v.ValidateAll(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	}, func(err error) { errs = append(errs, err) })
	return errs
}

// visit calls fn on m and on every message inside it, unpacking Anys;
// packed is true for m itself and for each message an Any held. An Any
// that does not unmarshal is reported to bad.
func visit(m proto.Message, fn func(msg proto.Message, packed bool), bad func(error)) {
	fn(m, true)
	var rec func(protoreflect.Message)
	each := func(x protoreflect.Message) {
		a, ok := x.Interface().(*anypb.Any)
		if !ok {
			fn(x.Interface(), false)
			rec(x)
			return
		}
		inner, err := a.UnmarshalNew()
		if err != nil {
			bad(fmt.Errorf("typed_config %s: %w", a.GetTypeUrl(), err))
			return
		}
		fn(inner, true)
		rec(inner.ProtoReflect())
	}
	rec = func(pm protoreflect.Message) {
		pm.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := range v.List().Len() {
					each(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					each(mv.Message())
					return true
				})
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				each(v.Message())
			}
			return true
		})
	}
	rec(m.ProtoReflect())
}
