package pipeline

import (
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

const (
	typeRoute    = resource.RouteType
	typeCluster  = resource.ClusterType
	typeEndpoint = resource.EndpointType
)

// groupDef is how the pipeline publishes one consumer group.
type groupDef struct {
	name xdsres.Group
	// staged groups publish make-before-break (staging.go); warmupRoutes
	// adds gRPC's warm-up routes.
	staged, warmupRoutes bool
}

var groups = []groupDef{
	{name: xdsres.GroupEnvoy, staged: true},
	{name: xdsres.GroupGRPC, staged: true, warmupRoutes: true},
	{name: xdsres.GroupDNS},
	{name: xdsres.GroupMesh, staged: true},
}
