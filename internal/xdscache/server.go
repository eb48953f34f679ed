package xdscache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	envoy_service_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	envoy_service_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	envoy_service_route_v3 "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	envoy_service_secret_v3 "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/config"
	"github.com/envoyproxy/go-control-plane/pkg/server/sotw/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Metrics are the xDS server's Prometheus metrics.
type Metrics struct {
	Connected *prometheus.GaugeVec
	Pushes    *prometheus.CounterVec
	Resources *prometheus.CounterVec
	NACKs     *prometheus.CounterVec
	// Oversized counts responses over ClientMessageLimit (large.go).
	Oversized *prometheus.CounterVec
	// Dropped counts responses the cache could not hand a stream because
	// its buffer was full (see send).
	Dropped *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Connected: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "switchyard_xds_streams", Help: "Open xDS streams by consumer group and protocol."}, []string{"group", "protocol"}),
		Pushes:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_xds_pushes_total", Help: "xDS responses sent, by consumer group and type."}, []string{"group", "type"}),
		Resources: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_xds_resources_sent_total", Help: "Resources sent in xDS responses, by consumer group and type."}, []string{"group", "type"}),
		NACKs:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_xds_nacks_total", Help: "xDS responses rejected by clients, by consumer group and type."}, []string{"group", "type"}),
		Oversized: newOversized(),
		Dropped:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_xds_dropped_responses_total", Help: "xDS responses dropped because the stream's buffer was full, by consumer group and type: the stream misses that update until its next request."}, []string{"group", "type"}),
	}
	if reg != nil {
		reg.MustRegister(m.Connected, m.Pushes, m.Resources, m.NACKs, m.Oversized, m.Dropped)
	}
	return m
}

// callbacks track which group each stream belongs to, count pushes and
// NACKs, and log each distinct NACK once.
type callbacks struct {
	metrics *Metrics
	log     *slog.Logger

	// authorize, when set, decides whether a stream may act as a node of a
	// group; ctxs holds each open stream's context for it.
	authorize GroupAuthorizer
	// acks, when set, records what each stream acknowledged.
	acks *Acks

	mu     sync.Mutex
	sotw   map[int64]xdsres.Group
	delta  map[int64]xdsres.Group
	logged map[string]bool
	ctxs   map[streamKey]context.Context
}

// streamKey names a stream: SotW and delta streams are numbered apart.
type streamKey struct {
	delta bool
	id    int64
}

// GroupAuthorizer decides whether the client of a stream (its TLS peer is
// in ctx) may be a node of group g. A non-nil error closes the stream with
// that error.
type GroupAuthorizer func(ctx context.Context, g xdsres.Group) error

// Option configures Register.
type Option func(*callbacks)

// WithAcks records in a what every stream's node acknowledges and
// rejects, for the Programmed condition.
func WithAcks(a *Acks) Option {
	return func(cb *callbacks) { cb.acks = a }
}

// WithGroupAuthorizer checks every node a stream announces: the group a
// node claims decides what it receives (Secrets go to Envoy nodes only),
// so a client must not claim a group it is not trusted with.
func WithGroupAuthorizer(a GroupAuthorizer) Option {
	return func(cb *callbacks) { cb.authorize = a }
}

func (cb *callbacks) opened(ctx context.Context, k streamKey) {
	if cb.authorize == nil {
		return
	}
	cb.mu.Lock()
	cb.ctxs[k] = ctx
	cb.mu.Unlock()
}

func (cb *callbacks) forget(k streamKey) {
	cb.mu.Lock()
	delete(cb.ctxs, k)
	cb.mu.Unlock()
}

// errNoNode closes a stream whose requests never named a node: which
// group it belongs to cannot be told, and guessing Envoy's would hand it
// private keys.
var errNoNode = status.Error(codes.InvalidArgument, "xDS request without a node: set node.id, and node.user_agent_name or the "+xdsres.GroupMetadataKey+" metadata field")

// check denies a stream that never named its node and authorizes the
// node a request carries. Every request is checked, not only the first: a
// client may send another node later in a stream. A request without a
// node on a stream that named one earlier is the stream's node (Envoy's
// set_node_on_first_message_only), already checked.
func (cb *callbacks) check(k streamKey, node *envoy_config_core_v3.Node) error {
	if !HasNode(node) {
		cb.mu.Lock()
		_, known := cb.sotw[k.id]
		if k.delta {
			_, known = cb.delta[k.id]
		}
		cb.mu.Unlock()
		if !known {
			return errNoNode
		}
		return nil
	}
	if cb.authorize == nil {
		return nil
	}
	cb.mu.Lock()
	ctx := cb.ctxs[k]
	cb.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	return cb.authorize(ctx, GroupOf(node))
}

// maxLoggedNACKs bounds the memory used to log each NACK once.
const maxLoggedNACKs = 4096

func (cb *callbacks) streamGroup(streams map[int64]xdsres.Group, id int64, node *envoy_config_core_v3.Node, protocol string) xdsres.Group {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if g, ok := streams[id]; ok {
		return g
	}
	g := GroupOf(node)
	streams[id] = g
	cb.metrics.Connected.WithLabelValues(string(g), protocol).Inc()
	// Once per stream, on its first request: what an operator needs to
	// tell which node came and went, without a line per request.
	cb.log.Info("xDS client connected", "stream", id, "protocol", protocol, "node", node.GetId(), "cluster", node.GetCluster(), "group", g)
	return g
}

func (cb *callbacks) closed(streams map[int64]xdsres.Group, id int64, protocol string) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if g, ok := streams[id]; ok {
		delete(streams, id)
		cb.metrics.Connected.WithLabelValues(string(g), protocol).Dec()
		cb.log.Info("xDS client disconnected", "stream", id, "protocol", protocol, "group", g)
	}
}

// nack counts a rejected response and logs it unless the same rejection
// (group, type and error) was logged before: the error names the rejected
// content, and every client rejecting it, or one client rejecting it again
// after a reconnect, must not flood the log.
func (cb *callbacks) nack(g xdsres.Group, node *envoy_config_core_v3.Node, typeURL, nonce, msg string) {
	cb.metrics.NACKs.WithLabelValues(string(g), xdsres.ShortType(typeURL)).Inc()
	if cb.firstTime(fmt.Sprintf("%s\x00%s\x00%s", g, typeURL, msg)) {
		cb.log.Warn("xDS client rejected a response", "group", g, "node", node.GetId(), "type", xdsres.ShortType(typeURL), "nonce", nonce, "error", msg)
	}
}

// firstTime reports whether key is logged for the first time, and records
// it; the memory is bounded by forgetting everything past maxLoggedNACKs.
func (cb *callbacks) firstTime(key string) bool {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.logged[key] {
		return false
	}
	if len(cb.logged) >= maxLoggedNACKs {
		cb.logged = map[string]bool{}
	}
	cb.logged[key] = true
	return true
}

// dropped counts a response the cache dropped for want of room in the
// stream's buffer and logs it once per node, group and type: the stream
// misses that update until its next request, which only the server can
// tell.
func (cb *callbacks) dropped(g xdsres.Group, node *envoy_config_core_v3.Node, typeURL string) {
	cb.metrics.Dropped.WithLabelValues(string(g), xdsres.ShortType(typeURL)).Inc()
	if cb.firstTime(fmt.Sprintf("dropped\x00%s\x00%s\x00%s", g, node.GetId(), typeURL)) {
		cb.log.Warn("xDS response dropped: the stream's buffer was full; the node misses this update until its next request",
			"group", g, "node", node.GetId(), "type", xdsres.ShortType(typeURL))
	}
}

// pushed counts one response of n resources.
func (cb *callbacks) pushed(g xdsres.Group, typeURL string, n int) {
	cb.metrics.Pushes.WithLabelValues(string(g), xdsres.ShortType(typeURL)).Inc()
	cb.metrics.Resources.WithLabelValues(string(g), xdsres.ShortType(typeURL)).Add(float64(n))
}

func (cb *callbacks) funcs() serverv3.CallbackFuncs {
	return serverv3.CallbackFuncs{
		StreamOpenFunc: func(ctx context.Context, id int64, _ string) error {
			cb.opened(ctx, streamKey{id: id})
			return nil
		},
		DeltaStreamOpenFunc: func(ctx context.Context, id int64, _ string) error {
			cb.opened(ctx, streamKey{delta: true, id: id})
			return nil
		},
		StreamRequestFunc: func(id int64, req *envoy_service_discovery_v3.DiscoveryRequest) error {
			if err := cb.check(streamKey{id: id}, req.GetNode()); err != nil {
				return err
			}
			g := cb.streamGroup(cb.sotw, id, req.GetNode(), "sotw")
			if req.GetErrorDetail() != nil {
				cb.nack(g, req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail().GetMessage())
			}
			if cb.acks != nil {
				cb.acks.sotwRequest(streamKey{id: id}, g, req)
			}
			return nil
		},
		StreamResponseFunc: func(ctx context.Context, id int64, req *envoy_service_discovery_v3.DiscoveryRequest, resp *envoy_service_discovery_v3.DiscoveryResponse) {
			g := cb.streamGroup(cb.sotw, id, req.GetNode(), "sotw")
			cb.pushed(g, resp.GetTypeUrl(), len(resp.GetResources()))
			cb.oversized(g, req.GetNode(), resp.GetTypeUrl(), resp.GetVersionInfo(), proto.Size(resp))
			if cb.acks != nil && ctx != nil {
				cb.acks.sotwSent(ctx, streamKey{id: id}, g, req, resp)
			}
		},
		StreamClosedFunc: func(id int64, _ *envoy_config_core_v3.Node) {
			cb.forget(streamKey{id: id})
			cb.closed(cb.sotw, id, "sotw")
			if cb.acks != nil {
				cb.acks.closed(streamKey{id: id})
			}
		},
		StreamDeltaRequestFunc: func(id int64, req *envoy_service_discovery_v3.DeltaDiscoveryRequest) error {
			if err := cb.check(streamKey{delta: true, id: id}, req.GetNode()); err != nil {
				return err
			}
			g := cb.streamGroup(cb.delta, id, req.GetNode(), "delta")
			if req.GetErrorDetail() != nil {
				cb.nack(g, req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail().GetMessage())
			}
			if cb.acks != nil {
				cb.acks.deltaRequest(streamKey{delta: true, id: id}, g, req)
			}
			return nil
		},
		StreamDeltaResponseFunc: func(id int64, req *envoy_service_discovery_v3.DeltaDiscoveryRequest, resp *envoy_service_discovery_v3.DeltaDiscoveryResponse) {
			g := cb.streamGroup(cb.delta, id, req.GetNode(), "delta")
			cb.pushed(g, resp.GetTypeUrl(), len(resp.GetResources()))
			cb.oversized(g, req.GetNode(), resp.GetTypeUrl(), resp.GetSystemVersionInfo(), proto.Size(resp))
			if cb.acks != nil {
				cb.acks.deltaSent(streamKey{delta: true, id: id}, g, req, resp)
			}
		},
		DeltaStreamClosedFunc: func(id int64, _ *envoy_config_core_v3.Node) {
			cb.forget(streamKey{delta: true, id: id})
			cb.closed(cb.delta, id, "delta")
			if cb.acks != nil {
				cb.acks.closed(streamKey{delta: true, id: id})
			}
		},
	}
}

// namedTypes are the types an empty subscription does not ask for in
// full: Envoy's legacy wildcard (an empty first request) is kept for the
// types Envoy subscribes to that way, listeners, clusters and scopes;
// routes, endpoints and secrets are named.
var namedTypes = []string{resource.RouteType, resource.EndpointType, resource.SecretType}

// Register serves the cache on a gRPC server: ADS and the per-type
// discovery services, state-of-the-world and delta.
func Register(ctx context.Context, gs *grpc.Server, c *Cache, m *Metrics, log *slog.Logger, opts ...Option) {
	cb := &callbacks{metrics: m, log: log, sotw: map[int64]xdsres.Group{}, delta: map[int64]xdsres.Group{}, logged: map[string]bool{}, ctxs: map[streamKey]context.Context{}}
	for _, o := range opts {
		o(cb)
	}
	c.OnDropped(cb.dropped)
	srv := serverv3.NewServer(ctx, c, cb.funcs(),
		sotw.WithOrderedADS(),
		sotw.WithLogger(quietLogger{log}),
		config.DeactivateLegacyWildcardForTypes(namedTypes),
	)
	envoy_service_discovery_v3.RegisterAggregatedDiscoveryServiceServer(gs, srv)
	envoy_service_endpoint_v3.RegisterEndpointDiscoveryServiceServer(gs, srv)
	envoy_service_cluster_v3.RegisterClusterDiscoveryServiceServer(gs, srv)
	envoy_service_listener_v3.RegisterListenerDiscoveryServiceServer(gs, srv)
	envoy_service_route_v3.RegisterRouteDiscoveryServiceServer(gs, srv)
	envoy_service_route_v3.RegisterScopedRoutesDiscoveryServiceServer(gs, srv)
	envoy_service_secret_v3.RegisterSecretDiscoveryServiceServer(gs, srv)
}

// quietLogger adapts slog to go-control-plane's logger, demoting its
// informational chatter (stale nonces are routine) to debug.
type quietLogger struct{ l *slog.Logger }

func (q quietLogger) Debugf(format string, args ...any) { q.l.Debug(fmt.Sprintf(format, args...)) }
func (q quietLogger) Infof(format string, args ...any)  { q.l.Debug(fmt.Sprintf(format, args...)) }
func (q quietLogger) Warnf(format string, args ...any)  { q.l.Warn(fmt.Sprintf(format, args...)) }
func (q quietLogger) Errorf(format string, args ...any) { q.l.Error(fmt.Sprintf(format, args...)) }
