// Package xdscheck checks a set of xDS resources the way a client would
// before accepting it: every resource passes its protos' own ValidateAll,
// nested typed_configs included, and every name one resource uses to refer
// to another (a route's cluster, a cluster's load assignment, a scope's
// route configuration, a TLS context's secret) resolves inside the set.
// ClientRules adds what clients check beyond the protos.
//
// It exists for the gate before the cache (internal/pipeline), which
// withholds every resource that fails, for the translator's golden test,
// and for the tests that cannot enumerate their inputs — the fuzz
// targets, the isolation property, the soak — so that each of them
// asserts the same promise (decision 6 of site/architecture.md): the control plane
// never pushes a resource a client would reject.
package xdscheck

import (
	"fmt"
	"slices"
	"strings"

	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
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
	errs, _ := inspect(m, nil)
	if _, err := proto.Marshal(m); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", m.ProtoReflect().Descriptor().FullName(), err))
	}
	return errs
}

// ClientRules checks what the protos leave to the client and clients
// enforce anyway: a load assignment's endpoints must be IP literals with
// ports 1-65535 (endpointProblems). Each error names the field and value.
//
// They are apart from Validate because the translator still emits such
// endpoints when a source lets them through: the gate before the cache
// applies both, and withholds what fails.
func ClientRules(m proto.Message) []error {
	if cla, ok := m.(*envoy_config_endpoint_v3.ClusterLoadAssignment); ok {
		return endpointProblems(cla)
	}
	return nil
}

// Served is Validate plus ClientRules: everything a resource must pass to
// be sent to a client.
func Served(m proto.Message) []error {
	return append(ClientRules(m), Validate(m)...)
}

// Inspect is Served without the UTF-8 check, plus Refs, in one walk: for a
// message decoded from the wire, whose strings the decoder checked, it is
// everything the gate before the cache needs.
func Inspect(m proto.Message) (errs []error, refs []Ref) {
	return inspect(m, ClientRules(m))
}

// inspect adds to errs what ValidateAll finds in m and the messages packed
// in it, and lists m's references.
func inspect(m proto.Message, errs []error) ([]error, []Ref) {
	in := &inspection{errs: errs}
	visitMemo(m, func(msg proto.Message, packed bool) {
		for _, r := range refsOf(msg) {
			in.refs = append(in.refs, Ref{Type: refTypes[r.kind], Name: r.name})
		}
		if hv, ok := msg.(*envoy_config_core_v3.HeaderValue); ok {
			if err := FormatString(hv.GetValue()); err != nil {
				in.errs = append(in.errs, fmt.Errorf("header %s: %w", hv.GetKey(), err))
			}
		}
		if !packed {
			return // ValidateAll of the message holding it covered it
		}
		name := msg.ProtoReflect().Descriptor().FullName()
		v, ok := msg.(interface{ ValidateAll() error })
		switch {
		case !ok:
			in.errs = append(in.errs, fmt.Errorf("%s has no ValidateAll", name))
		default:
			if err := v.ValidateAll(); err != nil {
				in.errs = append(in.errs, described(name, msg, err, in.errs)...)
			}
		}
	}, func(err error) { in.errs = append(in.errs, err) }, in)
	return in.errs, in.refs
}

// inspection is what inspect has found so far in one message. It skips
// the Anys cleanAnys knows, taking their references from it, and tells
// it those it finds nothing wrong in.
type inspection struct {
	errs []error
	refs []Ref
}

func (in *inspection) known(a *anypb.Any) bool {
	refs, ok := cleanAnys.get(a)
	if !ok && a.GetTypeUrl() == hcmType {
		return in.knownMasked(a)
	}
	in.refs = append(in.refs, refs...)
	return ok
}

// knownMasked is known for a connection manager cleanAnys does not have
// by its bytes: one remembered by maskRDS's key, its route
// configuration's reference renamed to this one's, or by maskInline's.
func (in *inspection) knownMasked(a *anypb.Any) bool {
	var buf [maskBuffer]byte
	key, name, ok := maskRDS(buf[:0], a.GetValue())
	if !ok {
		return in.knownInline(a)
	}
	refs, ok := cleanAnys.getMasked(key)
	if !ok {
		return false
	}
	in.refs = append(in.refs, Ref{Type: refs[0].Type, Name: name})
	in.refs = append(in.refs, refs[1:]...)
	return true
}

// maskBuffer is the size of the buffer on the stack a lookup makes its
// masked key in: a gRPC host's connection managers' fit.
const maskBuffer = 512

// knownInline is known for a connection manager remembered by
// maskInline's key: its references are those remembered, the names
// masked being in none.
func (in *inspection) knownInline(a *anypb.Any) bool {
	var buf [maskBuffer]byte
	key, ok := maskInline(buf[:0], a.GetValue())
	if !ok {
		return false
	}
	refs, ok := cleanAnys.getInline(key)
	if !ok {
		return false
	}
	in.refs = append(in.refs, refs...)
	return true
}

func (in *inspection) mark() [2]int { return [2]int{len(in.errs), len(in.refs)} }

// seen remembers a as clean when nothing was found wrong in the message
// so far, a included: an error ValidateAll finds is left out when an
// earlier one names its field (described), so an Any found clean after
// errors might not be clean on its own. One found clean with none before
// is clean wherever it is, what it holds being checked on its own.
func (in *inspection) seen(a *anypb.Any, inner proto.Message, at [2]int) {
	if at[0] != 0 || len(in.errs) != 0 {
		return
	}
	refs := in.refs[at[1]:]
	cleanAnys.put(a, refs)
	if hcm, ok := inner.(*envoy_filter_network_http_connection_manager_v3.HttpConnectionManager); ok && a.GetTypeUrl() == hcmType {
		rememberMasked(a, hcm, refs)
		rememberInline(a, refs)
	}
}

// rememberMasked puts a clean connection manager in cleanAnys by
// maskRDS's key too, when its first reference is its route
// configuration's by the name masked: the one getMasked renames.
func rememberMasked(a *anypb.Any, hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager, refs []Ref) {
	key, name, ok := maskRDS(nil, a.GetValue())
	rds := hcm.GetRds()
	if !ok || rds == nil || rds.GetRouteConfigName() != name || len(refs) == 0 || refs[0] != (Ref{Type: refTypes["route configuration"], Name: name}) {
		return
	}
	cleanAnys.putMasked(key, refs)
}

// rememberInline puts a clean connection manager in cleanAnys by
// maskInline's key too.
func rememberInline(a *anypb.Any, refs []Ref) {
	if key, ok := maskInline(nil, a.GetValue()); ok {
		cleanAnys.putInline(key, refs)
	}
}

// described is a ValidateAll error of msg (named name), one error per
// failing field with its path and value, leaving out the fields the
// errors so far already name (endpointProblems').
func described(name protoreflect.FullName, msg proto.Message, err error, so []error) []error {
	var out []error
	for _, d := range describe(msg.ProtoReflect(), err) {
		path, _, _ := strings.Cut(d, ": ")
		if slices.ContainsFunc(so, func(e error) bool { return strings.HasPrefix(e.Error(), path+": ") }) {
			continue
		}
		out = append(out, fmt.Errorf("%s: %s", name, d))
	}
	return out
}
