package translator

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// ForGroup translates the DAG for the consumer group of that name: Envoy
// for "envoy", GRPC for "grpc", DNS for "dns", MeshNode for "mesh". It is the one place that
// maps a group to its translation, for callers that pick the group at run
// time; any other name is an error.
func ForGroup(group xdsres.Group, d *dag.DAG, snap *objects.Snapshot, opts Options) (*Resources, error) {
	switch group {
	case xdsres.GroupEnvoy:
		return Envoy(d, snap, opts), nil
	case xdsres.GroupGRPC:
		return GRPC(d, snap, opts), nil
	case xdsres.GroupDNS:
		return DNS(d, snap, opts), nil
	case xdsres.GroupMesh:
		return MeshNode(d, snap, opts), nil
	}
	return nil, fmt.Errorf("unknown group %q", group)
}
