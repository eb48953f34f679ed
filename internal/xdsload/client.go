// Package xdsload opens many delta ADS streams against an xDS server, the
// way a fleet of proxyless gRPC clients would, and records when each one
// receives what. It exists for the fan-out benchmarks (initial sync of a
// thousand streams, one change reaching all of them) and for load tests
// against a running control plane.
//
// Each stream starts from listener names and follows them as a gRPC client
// does: the listener's HCM names its route configuration, the routes name
// clusters, and each cluster's EDS service name is a load assignment. It
// ACKs every response and never NACKs: it measures delivery, not
// validation.
package xdsload

import (
	"context"
	"fmt"
	"sync"
	"time"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Config says how many streams to open, where, and what each follows.
type Config struct {
	// Target is the server's address, host:port.
	Target string
	// Streams is the number of ADS streams.
	Streams int
	// StreamsPerConn is how many streams share one connection (HTTP/2
	// multiplexes them); 0 means 10.
	StreamsPerConn int
	// Group is the consumer group the streams claim through node
	// metadata; "" means grpc.
	Group string
	// Listeners returns the listener names stream i starts from.
	Listeners func(i int) []string
}

// Client is a set of running streams.
type Client struct {
	conns   []*grpc.ClientConn
	streams []*Stream
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Start dials the server and opens every stream; each subscribes to its
// listeners at once. Stop ends them.
func Start(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.StreamsPerConn <= 0 {
		cfg.StreamsPerConn = 10
	}
	if cfg.Group == "" {
		cfg.Group = string(xdsres.GroupGRPC)
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &Client{cancel: cancel}
	var conn *grpc.ClientConn
	for i := range cfg.Streams {
		if i%cfg.StreamsPerConn == 0 {
			var err error
			conn, err = grpc.NewClient(cfg.Target, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				c.Stop()
				return nil, fmt.Errorf("dialing %s: %w", cfg.Target, err)
			}
			c.conns = append(c.conns, conn)
		}
		s, err := openStream(ctx, conn, node(cfg.Group, i), cfg.Listeners(i))
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("stream %d: %w", i, err)
		}
		c.streams = append(c.streams, s)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			s.run()
		}()
	}
	return c, nil
}

func node(group string, i int) *envoy_config_core_v3.Node {
	return &envoy_config_core_v3.Node{
		Id:            fmt.Sprintf("xdsload-%d", i),
		UserAgentName: "gRPC Go xdsload",
		Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
			xdsres.GroupMetadataKey: structpb.NewStringValue(group),
		}},
	}
}

// Streams returns the streams, in the order they were opened.
func (c *Client) Streams() []*Stream { return c.streams }

// Stop closes every stream and connection and waits for them.
func (c *Client) Stop() {
	c.cancel()
	for _, conn := range c.conns {
		_ = conn.Close() // closing a client connection reports nothing useful
	}
	c.wg.Wait()
}

// WaitSynced waits until every stream has received every resource it
// follows and returns, per stream, how long after it opened that was.
func (c *Client) WaitSynced(ctx context.Context) ([]time.Duration, error) {
	out := make([]time.Duration, len(c.streams))
	for i, s := range c.streams {
		d, err := s.waitSynced(ctx)
		if err != nil {
			return nil, fmt.Errorf("stream %d: %w", i, err)
		}
		out[i] = d
	}
	return out, nil
}

// Versions returns, per stream, the version it holds of a resource (""
// when it has none).
func (c *Client) Versions(typeURL, name string) []string {
	out := make([]string, len(c.streams))
	for i, s := range c.streams {
		out[i] = s.version(typeURL, name)
	}
	return out
}

// WaitChanged waits until every stream holds a version of the resource
// other than the one given for it (see Versions) and returns when each
// received it, with the size of the response that carried it.
func (c *Client) WaitChanged(ctx context.Context, typeURL, name string, from []string) ([]Receipt, error) {
	out := make([]Receipt, len(c.streams))
	for i, s := range c.streams {
		r, err := s.waitChanged(ctx, typeURL, name, from[i])
		if err != nil {
			return nil, fmt.Errorf("stream %d: %w", i, err)
		}
		out[i] = r
	}
	return out, nil
}

// Receipt is when a stream received a resource, and the size of the
// response that carried it.
type Receipt struct {
	At        time.Time
	Bytes     int
	Resources int
}

// Stream is one ADS stream and what it has received.
type Stream struct {
	ads    envoy_service_discovery_v3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	node   *envoy_config_core_v3.Node
	opened time.Time

	mu   sync.Mutex
	cond *sync.Cond
	// held is, per type URL and name, the version held and its receipt.
	held map[string]map[string]held
	// want is what the stream follows, per type URL: names it subscribed
	// to.
	want map[string]map[string]bool
	err  error
}

type held struct {
	version string
	receipt Receipt
}

func openStream(ctx context.Context, conn *grpc.ClientConn, n *envoy_config_core_v3.Node, listeners []string) (*Stream, error) {
	ads, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	s := &Stream{ads: ads, node: n, opened: time.Now(), held: map[string]map[string]held{}, want: map[string]map[string]bool{}}
	s.cond = sync.NewCond(&s.mu)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s, s.subscribe(typeListener, listeners)
}

// subscribe asks for names of a type not yet followed; s.mu is held.
func (s *Stream) subscribe(typeURL string, names []string) error {
	want := s.want[typeURL]
	if want == nil {
		want = map[string]bool{}
		s.want[typeURL] = want
	}
	var add []string
	for _, n := range names {
		if !want[n] {
			want[n] = true
			add = append(add, n)
		}
	}
	if len(add) == 0 {
		return nil
	}
	return s.ads.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: s.node, TypeUrl: typeURL, ResourceNamesSubscribe: add})
}

// run receives, records, ACKs and follows until the stream ends.
func (s *Stream) run() {
	for {
		resp, err := s.ads.Recv()
		now := time.Now()
		if err != nil {
			s.mu.Lock()
			s.err = err
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		receipt := Receipt{At: now, Bytes: proto.Size(resp), Resources: len(resp.GetResources())}
		if err := s.handle(resp, receipt); err != nil {
			s.mu.Lock()
			s.err = err
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
	}
}

func (s *Stream) handle(resp *envoy_service_discovery_v3.DeltaDiscoveryResponse, receipt Receipt) error {
	typeURL := resp.GetTypeUrl()
	follow := map[string][]string{}
	for _, r := range resp.GetResources() {
		next, err := references(typeURL, r.GetResource())
		if err != nil {
			return fmt.Errorf("%s %s: %w", typeURL, r.GetName(), err)
		}
		for t, names := range next {
			follow[t] = append(follow[t], names...)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := s.held[typeURL]
	if byName == nil {
		byName = map[string]held{}
		s.held[typeURL] = byName
	}
	for _, r := range resp.GetResources() {
		byName[r.GetName()] = held{version: r.GetVersion(), receipt: receipt}
	}
	for _, name := range resp.GetRemovedResources() {
		delete(byName, name)
	}
	if err := s.ads.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: s.node, TypeUrl: typeURL, ResponseNonce: resp.GetNonce()}); err != nil {
		return err
	}
	for _, t := range followOrder {
		if err := s.subscribe(t, follow[t]); err != nil {
			return err
		}
	}
	s.cond.Broadcast()
	return nil
}

func (s *Stream) version(typeURL, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[typeURL][name].version
}

// synced reports whether every followed resource has arrived; s.mu is
// held.
func (s *Stream) synced() (time.Time, bool) {
	var last time.Time
	for t, names := range s.want {
		for n := range names {
			h, ok := s.held[t][n]
			if !ok {
				return time.Time{}, false
			}
			if h.receipt.At.After(last) {
				last = h.receipt.At
			}
		}
	}
	return last, true
}

// waitFor waits, with s.mu held, until done reports true or ctx ends.
func (s *Stream) waitFor(ctx context.Context, done func() bool) error {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	for !done() {
		if s.err != nil {
			return s.err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s.cond.Wait()
	}
	return nil
}

func (s *Stream) waitSynced(ctx context.Context) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var at time.Time
	err := s.waitFor(ctx, func() bool {
		var ok bool
		at, ok = s.synced()
		return ok
	})
	return at.Sub(s.opened), err
}

func (s *Stream) waitChanged(ctx context.Context, typeURL, name, from string) (Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r Receipt
	err := s.waitFor(ctx, func() bool {
		h, ok := s.held[typeURL][name]
		r = h.receipt
		return ok && h.version != from
	})
	return r, err
}
