package server_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/cespare/xxhash/v2"
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// The soak: SOAK_STREAMS ADS streams on loopback while objects and
// endpoints churn for SOAK_SECONDS. By default it is the short one `make
// test` runs (50 streams, 3 seconds); `make soak` runs the long one (500
// streams, 60 seconds) with the same code. It checks that every client ends
// on the final content, that clients which never read delay nobody, that
// goroutines return to their baseline once the clients leave, and that the
// heap does not grow under churn. It logs its figures.

const (
	soakServices = 20
	soakProxies  = 20
	soakStuck    = 10 // clients that keep asking but never read a response
)

func soakEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// soakClient is an Envoy-like ADS client: clusters by wildcard, then the
// load assignments of every cluster it holds, on one stream, ACKing each
// response. It keeps a hash of every resource it holds.
type soakClient struct {
	delta bool

	mu        sync.Mutex
	clusters  map[string]uint64
	endpoints map[string]uint64
	err       error
}

func (c *soakClient) run(ctx context.Context, cc *grpc.ClientConn) {
	ads := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc)
	var err error
	if c.delta {
		err = c.runDelta(ctx, ads)
	} else {
		err = c.runSotw(ctx, ads)
	}
	if ctx.Err() == nil {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
	}
}

func (c *soakClient) runSotw(ctx context.Context, ads envoy_service_discovery_v3.AggregatedDiscoveryServiceClient) error {
	st, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return err
	}
	if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType}); err != nil {
		return err
	}
	// A state-of-the-world request states the whole subscription, ACKs
	// included: an EDS ACK without the names would unsubscribe them all.
	// A subscription change carries the last EDS response's nonce and
	// version, as Envoy's does; one with another nonce is stale and
	// ignored, and the next ACK, which names the subscription, makes up
	// for it.
	var edsNames []string
	var edsVersion, edsNonce string
	for {
		resp, err := st.Recv()
		if err != nil {
			return err
		}
		held := map[string]uint64{}
		for _, a := range resp.GetResources() {
			held[nameOf(resp.GetTypeUrl(), a.GetValue())] = xxhash.Sum64(a.GetValue())
		}
		names := c.record(resp.GetTypeUrl(), held, nil, resp.GetTypeUrl() == resource.ClusterType)
		ack := &envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resp.GetTypeUrl(), VersionInfo: resp.GetVersionInfo(), ResponseNonce: resp.GetNonce()}
		if resp.GetTypeUrl() == resource.EndpointType {
			ack.ResourceNames = edsNames
			edsVersion, edsNonce = resp.GetVersionInfo(), resp.GetNonce()
		}
		if err := st.Send(ack); err != nil {
			return err
		}
		if resp.GetTypeUrl() == resource.ClusterType && !slices.Equal(names, edsNames) {
			edsNames = names
			if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.EndpointType, ResourceNames: names, VersionInfo: edsVersion, ResponseNonce: edsNonce}); err != nil {
				return err
			}
		}
	}
}

func (c *soakClient) runDelta(ctx context.Context, ads envoy_service_discovery_v3.AggregatedDiscoveryServiceClient) error {
	st, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		return err
	}
	if err := st.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType}); err != nil {
		return err
	}
	subscribed := map[string]bool{}
	for {
		resp, err := st.Recv()
		if err != nil {
			return err
		}
		upd := map[string]uint64{}
		for _, r := range resp.GetResources() {
			upd[r.GetName()] = xxhash.Sum64(r.GetResource().GetValue())
		}
		names := c.record(resp.GetTypeUrl(), upd, resp.GetRemovedResources(), false)
		if err := st.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}); err != nil {
			return err
		}
		if resp.GetTypeUrl() != resource.ClusterType {
			continue
		}
		sub, unsub := diffNames(subscribed, names)
		if len(sub)+len(unsub) > 0 {
			if err := st.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.EndpointType, ResourceNamesSubscribe: sub, ResourceNamesUnsubscribe: unsub}); err != nil {
				return err
			}
		}
	}
}

func diffNames(subscribed map[string]bool, names []string) (sub, unsub []string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
		if !subscribed[n] {
			sub = append(sub, n)
			subscribed[n] = true
		}
	}
	for n := range subscribed {
		if !want[n] {
			unsub = append(unsub, n)
			delete(subscribed, n)
		}
	}
	return sub, unsub
}

// record applies a response and returns the cluster names now held.
func (c *soakClient) record(typ string, upd map[string]uint64, removed []string, replace bool) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := &c.endpoints
	if typ == resource.ClusterType {
		m = &c.clusters
	}
	if replace || *m == nil {
		*m = map[string]uint64{}
	}
	for k, v := range upd {
		(*m)[k] = v
	}
	for _, k := range removed {
		delete(*m, k)
	}
	names := make([]string, 0, len(c.clusters))
	for n := range c.clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func nameOf(typ string, b []byte) string {
	if typ == resource.ClusterType {
		var c envoy_config_cluster_v3.Cluster
		_ = proto.Unmarshal(b, &c)
		return c.GetName()
	}
	var cla envoy_config_endpoint_v3.ClusterLoadAssignment
	_ = proto.Unmarshal(b, &cla)
	return cla.GetClusterName()
}

// upToDate reports whether the client holds exactly the cache's clusters
// and, for each, the cache's load assignment.
func (c *soakClient) upToDate(clusters, endpoints map[string]uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.clusters) != len(clusters) {
		return false
	}
	for n, h := range clusters {
		if c.clusters[n] != h || c.endpoints[n] != endpoints[n] {
			return false
		}
	}
	return true
}

// cacheState hashes the cache's envoy clusters and load assignments.
func cacheState(c *xdscache.Cache) (clusters, endpoints map[string]uint64) {
	clusters, endpoints = map[string]uint64{}, map[string]uint64{}
	for _, r := range c.Resources(xdsres.GroupEnvoy, resource.ClusterType) {
		clusters[r.Name] = xxhash.Sum64(r.Any.GetValue())
	}
	for _, r := range c.Resources(xdsres.GroupEnvoy, resource.EndpointType) {
		endpoints[r.Name] = xxhash.Sum64(r.Any.GetValue())
	}
	return clusters, endpoints
}

// memNow collects garbage and returns the live heap and goroutine count.
func memNow() (heap uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
