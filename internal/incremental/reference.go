package incremental

import (
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// ReferenceResult is a full build: what an Engine must equal.
type ReferenceResult struct {
	DAG      *dag.DAG
	Statuses []*dag.Status
	Targets  map[xdsres.Group]Targets
}

// Reference builds everything from scratch the straightforward way:
// dag.Build, then each group's translation, each resource encoded compactly
// as the engine encodes it. It is what the engine's output is tested
// against, and what a degraded engine serves. A resource that fails to
// encode is left out.
func Reference(snap *objects.Snapshot, dagOpts dag.Options, trOpts translator.Options) *ReferenceResult {
	res := dag.Build(snap, dagOpts)
	out := &ReferenceResult{DAG: res.DAG, Statuses: res.Statuses, Targets: map[xdsres.Group]Targets{}}
	for _, g := range xdsres.Groups {
		tr, err := translator.ForGroup(g, res.DAG, snap, trOpts)
		if err != nil {
			// A group served but not translated: a bug, not an input.
			panic(err)
		}
		t := Targets{}
		for _, typ := range xdsres.TypesOf(g) {
			t[typ] = xdsres.NewSet(0)
		}
		for _, m := range tr.All() {
			if r, err := xdsres.Encode(m); err == nil && t[r.Any.TypeUrl] != nil {
				t[r.Any.TypeUrl].Put(r.Name, r)
			}
		}
		out.Targets[g] = t
	}
	return out
}
