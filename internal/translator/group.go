package translator

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// ForGroup translates the DAG for the consumer group of that name: Envoy
// for "envoy", GRPC for "grpc", DNS for "dns", MeshNode for "mesh". It is the one place that
// maps a group to its translation, for callers that pick the group at run
// time; any other name is an error.
func ForGroup(group string, d *dag.DAG, snap *objects.Snapshot, opts Options) (*Resources, error) {
	switch group {
	case "envoy":
		return Envoy(d, snap, opts), nil
	case "grpc":
		return GRPC(d, snap, opts), nil
	case "dns":
		return DNS(d, snap, opts), nil
	case "mesh":
		return MeshNode(d, snap, opts), nil
	}
	return nil, fmt.Errorf("unknown group %q", group)
}
