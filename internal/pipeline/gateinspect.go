package pipeline

import (
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// The gate's first pass inspects every resource of the build, and most
// of them are made by the engine's parallel phases, which hold the
// message a moment before dropping it for its encoding. Inspecting it
// there (the engine's Config.Inspect) spares decoding it again and runs
// on every core with the translation; the gate takes the inspection it recorded
// then (Gate.record) and inspects what has none —
// the HTTPS listener the engine splices from its hosts' chains, secrets,
// resources staged or patched — as before, from its encoding. The engine
// does so in its first build only: a later one encodes again much that
// has not changed, which the gate, inspecting only what changed, never
// looks at.

// inspectEncoded is the inspection the gate would make of r, from m, the
// message r was encoded from. It makes none when r's encoding would not
// decode, so that the gate decodes it and says so as it does for any
// resource.
func inspectEncoded(m proto.Message, r *xdsres.Resource) *inspection {
	if !xdscheck.Decodes(m.ProtoReflect().Descriptor(), r.Any.GetValue()) {
		return nil
	}
	errs, refs := xdscheck.Inspect(m)
	return &inspection{err: joinProblems(errs), refs: refs}
}

// inspect is the gate's inspection of a resource that has none made as it
// was encoded: its decoded message's. A load assignment the byte scan
// finds clean is not decoded: those are most of what the gate inspects
// itself, and the scan says clean only when the inspection would.
func inspect(r *xdsres.Resource, typ, name string) inspection {
	if r.Any.GetTypeUrl() == resource.EndpointType && xdscheck.CleanAssignment(r.Any.GetValue()) {
		return inspection{}
	}
	return inspectDecoded(r, typ, name)
}

// inspectDecoded is inspect without the byte scan.
func inspectDecoded(r *xdsres.Resource, typ, name string) inspection {
	m := r.Decoded()
	if m == nil {
		return inspection{err: fmt.Errorf("%s %q does not decode", kindName(typ), name)}
	}
	errs, refs := xdscheck.Inspect(m)
	return inspection{err: joinProblems(errs), refs: refs}
}

// expect sizes the recorded inspections for n resources: the first
// build records one per resource, and the engine's phases would
// otherwise grow the map, under its lock, by doubling.
func (gt *Gate) expect(n int) {
	gt.earlyMu.Lock()
	defer gt.earlyMu.Unlock()
	if gt.early == nil {
		gt.early = make(map[*xdsres.Resource]inspection, n)
	}
}

// record is the engine's Config.Inspect: it keeps inspectEncoded's
// inspection of r for the gate's next pass, which takes it instead of
// inspecting r itself. The resource does not hold it: a resource served
// for long should not keep 16 bytes it no longer needs.
func (gt *Gate) record(m proto.Message, r *xdsres.Resource) {
	in := inspectEncoded(m, r)
	if in == nil {
		return
	}
	gt.earlyMu.Lock()
	defer gt.earlyMu.Unlock()
	if gt.early == nil {
		gt.early = map[*xdsres.Resource]inspection{}
	}
	gt.early[r] = *in
}
