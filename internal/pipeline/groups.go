package pipeline

import (
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

const (
	typeRoute    = resource.RouteType
	typeCluster  = resource.ClusterType
	typeEndpoint = resource.EndpointType
)

// groupDef is how the pipeline publishes one consumer group.
type groupDef struct {
	name xdscache.Group
	// staged groups publish make-before-break (staging.go); warmupRoutes
	// adds gRPC's warm-up routes.
	staged, warmupRoutes bool
}

var groups = []groupDef{
	{name: xdscache.GroupEnvoy, staged: true},
	{name: xdscache.GroupGRPC, staged: true, warmupRoutes: true},
	{name: xdscache.GroupDNS},
	{name: xdscache.GroupMesh, staged: true},
}
