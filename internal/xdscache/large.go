package xdscache

import (
	"fmt"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// ClientMessageLimit is gRPC's default limit on a received message, 4 MiB.
// grpc-go's xDS client (the grpc group) always has it, and so does any
// client that does not raise it; Envoy's own gRPC client (envoy_grpc, what
// ADS uses) has no limit unless its bootstrap sets one. The server itself
// sends messages of any size (grpc-go's default send limit is 2 GiB).
const ClientMessageLimit = 4 << 20

// newOversized is the counter of responses over ClientMessageLimit.
func newOversized() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchyard_xds_oversized_responses_total",
		Help: "xDS responses larger than gRPC's default 4 MiB receive limit, by consumer group and type: clients that keep the default (every grpc-go xDS client) reject them.",
	}, []string{"group", "type"})
}

// oversized counts a response over ClientMessageLimit and logs it once per
// group, type and version, so that a configuration a client cannot take is
// never dropped silently: the client closes its stream and reconnects, and
// only the server can say why.
func (cb *callbacks) oversized(g xdsres.Group, node *envoy_config_core_v3.Node, typeURL, version string, size int) {
	if size <= ClientMessageLimit {
		return
	}
	cb.metrics.Oversized.WithLabelValues(string(g), xdsres.ShortType(typeURL)).Inc()
	if cb.firstTime(fmt.Sprintf("oversized\x00%s\x00%s\x00%s", g, typeURL, version)) {
		cb.log.Warn("xDS response larger than gRPC's default 4 MiB receive limit: clients that keep the default (grpc-go's xDS client among them) will reject it; split the virtual host, or raise the client's limit",
			"group", g, "node", node.GetId(), "type", xdsres.ShortType(typeURL), "version", version, "bytes", size)
	}
}
