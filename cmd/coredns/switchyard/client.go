package switchyard

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
)

// The node identity the plugin presents; Switchyard maps the metadata
// to its "dns" consumer group (internal/xdscache GroupOf).
const (
	userAgent        = "switchyard-coredns"
	groupMetadataKey = "switchyard.dev/group"
	groupDNS         = "dns"
)

// maxRecvMsgSize bounds one xDS response. gRPC's default of 4 MiB is
// reached by a CDS response of some tens of thousands of clusters.
const maxRecvMsgSize = 128 << 20

// client runs the ADS stream: state of the world over
// StreamAggregatedResources, one stream at a time, reconnecting with
// jittered exponential backoff. State of the world rather than delta
// because it is the variant every xDS server implements, its CDS
// responses are complete (a deletion cannot be missed) and, for the
// cluster counts a DNS zone has, resending the cluster list on a change
// costs little; the EDS fast path is unaffected, since servers send only
// the assignments that changed.
//
// The state and the stream belong to the run goroutine; everything other
// goroutines read is atomic.
type client struct {
	cfg     Config
	conns   []*grpc.ClientConn
	state   *xdsState
	log     logger
	metrics *clientMetrics
	// publish installs a new table; current returns the installed one.
	publish func(*table)
	current func() *table

	ready     atomic.Bool
	connected atomic.Bool
	stats     [numTypes]typeStats
	streams   atomic.Int64 // streams opened
	// timer ends warming after InitialFetchTimeout; nil until the
	// clusters arrived.
	timer *time.Timer
}

// typeStats count responses of one type; every response is either acked
// or nacked.
type typeStats struct {
	acks, nacks atomic.Int64
}

// logger is the part of CoreDNS's clog.P the client uses.
type logger interface {
	Infof(format string, v ...any)
	Warningf(format string, v ...any)
	Debugf(format string, v ...any)
}

func newNode(id string) *envoy_config_core_v3.Node {
	return &envoy_config_core_v3.Node{
		Id:            id,
		UserAgentName: userAgent,
		Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
			groupMetadataKey: structpb.NewStringValue(groupDNS),
		}},
	}
}

// dial creates one gRPC channel per control plane. It does no I/O: the
// channels connect on the first stream.
func (c *client) dial() error {
	creds := insecure.NewCredentials()
	if c.cfg.TLS != nil {
		tc, err := c.cfg.TLS.config()
		if err != nil {
			return err
		}
		creds = credentials.NewTLS(tc)
	}
	for _, target := range c.cfg.ControlPlanes {
		cc, err := grpc.NewClient(target,
			grpc.WithTransportCredentials(creds),
			grpc.WithUserAgent(userAgent),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvMsgSize)),
			// The channel's own reconnect backoff is bounded like the
			// stream's, or a long channel backoff would hide a restarted
			// control plane behind gRPC's default of up to two minutes.
			grpc.WithConnectParams(grpc.ConnectParams{
				Backoff: backoff.Config{
					BaseDelay:  c.cfg.ReconnectBase,
					Multiplier: 1.6,
					Jitter:     0.2,
					MaxDelay:   c.cfg.ReconnectMax,
				},
				MinConnectTimeout: 5 * time.Second,
			}),
		)
		if err != nil {
			c.close()
			return err
		}
		c.conns = append(c.conns, cc)
	}
	return nil
}

func (c *client) close() {
	for _, cc := range c.conns {
		_ = cc.Close()
	}
	c.conns = nil
	if c.timer != nil {
		c.timer.Stop()
	}
}

// run keeps a stream open until ctx ends. A stream that delivered at least
// one response resets the backoff; one that did not moves on to the next
// control plane.
func (c *client) run(ctx context.Context) {
	attempt, target := 0, 0
	for {
		progressed, err := c.stream(ctx, target)
		if ctx.Err() != nil {
			return
		}
		failed := target
		if progressed {
			attempt = 0
		} else {
			target = (target + 1) % len(c.conns)
		}
		d := backoffDelay(c.cfg.ReconnectBase, c.cfg.ReconnectMax, attempt)
		attempt++
		c.log.Warningf("xDS stream to %s ended: %v; connecting to %s in %s (answering from CDS version %q, EDS version %q meanwhile)",
			c.cfg.ControlPlanes[failed], err, c.cfg.ControlPlanes[target], d.Round(time.Millisecond), c.state.types[cds].version, c.state.types[eds].version)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// backoffDelay is base×2^attempt capped at max, with "equal jitter": a
// uniformly random delay between half and all of it, so that DNS servers
// restarted together do not reconnect in lockstep.
func backoffDelay(base, maxDelay time.Duration, attempt int) time.Duration {
	d := maxDelay
	if attempt < 63 && base <= maxDelay>>attempt {
		d = base << attempt
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// stream runs one ADS stream and reports whether it received a response.
func (c *client) stream(ctx context.Context, target int) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(c.conns[target]).StreamAggregatedResources(ctx)
	if err != nil {
		return false, err
	}
	for _, req := range c.state.streamStart() {
		if err := st.Send(req); err != nil {
			return false, err
		}
	}
	c.streams.Add(1)
	c.setConnected(true)
	defer c.setConnected(false)
	c.log.Infof("xDS stream to %s open as node %q", c.cfg.ControlPlanes[target], c.cfg.Node)
	got := false
	for {
		resp, err := st.Recv()
		if err != nil {
			return got, err
		}
		got = true
		for _, req := range c.apply(resp) {
			if err := st.Send(req); err != nil {
				return got, err
			}
		}
	}
}

// apply handles one response: the new table is installed before the ACK
// goes out, so a control plane that has seen the ACK can rely on answers
// reflecting it.
func (c *client) apply(resp *envoy_service_discovery_v3.DiscoveryResponse) []*envoy_service_discovery_v3.DiscoveryRequest {
	reqs, o := c.state.handle(resp)
	if !o.known {
		c.log.Debugf("%s", o.detail)
		return reqs
	}
	s := &c.stats[o.typ]
	c.metrics.responses(o.typ)
	if o.acked {
		s.acks.Add(1)
		c.metrics.ack(o.typ)
	} else {
		s.nacks.Add(1)
		c.metrics.nack(o.typ)
		c.log.Warningf("NACK %s version %q (nonce %q): %s; keeping the last good data", o.typ, resp.GetVersionInfo(), resp.GetNonce(), o.detail)
	}
	if o.changed {
		t := c.state.buildTable(c.current(), time.Now())
		c.publish(t)
		c.metrics.table(t)
	}
	c.updateReady()
	return reqs
}

// updateReady implements Envoy's warming: ready once clusters were
// received and all their endpoints too, or InitialFetchTimeout after the
// clusters arrived. Once ready, always ready: later outages are answered
// from the last good data.
func (c *client) updateReady() {
	if c.ready.Load() || !c.state.cdsSeen {
		return
	}
	if c.state.warm() {
		c.ready.Store(true)
		if c.timer != nil {
			c.timer.Stop()
		}
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(c.cfg.InitialFetchTimeout, func() {
			if c.ready.Swap(true) {
				return // warmed up in time
			}
			c.log.Warningf("endpoints of some clusters did not arrive within %s; ready anyway, those names answer NXDOMAIN until they do", c.cfg.InitialFetchTimeout)
		})
	}
}

func (c *client) setConnected(v bool) {
	c.connected.Store(v)
	c.metrics.connected(v)
}
