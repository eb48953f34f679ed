package server_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"

	"github.com/switchyard-dev/switchyard/internal/server"
)

// TestSoak is the soak; see soak_test.go.
func TestSoak(t *testing.T) {
	streams := soakEnvInt("SOAK_STREAMS", 50)
	duration := time.Duration(soakEnvInt("SOAK_SECONDS", 3)) * time.Second
	dir := t.TempDir()
	r := rand.New(rand.NewSource(1))
	for i := range soakServices {
		writeFile(t, dir, fmt.Sprintf("svc-%02d.yaml", i), soakService(i, r))
	}
	for i := range soakProxies {
		writeFile(t, dir, fmt.Sprintf("proxy-%02d.yaml", i), soakProxy(i, r))
	}
	s := startServer(t, dir, "127.0.0.1:0", func(c *server.Config) {
		c.Pipeline.Warmup = 100 * time.Millisecond
		c.Pipeline.Linger = time.Second
	})
	heap0, g0 := memNow()

	ctx, cancel := context.WithCancel(context.Background())
	var conns []*grpc.ClientConn
	for range 20 {
		conns = append(conns, dialXDS(t, s.XDSAddr().String()))
	}
	clients := make([]*soakClient, streams)
	var wg sync.WaitGroup
	for i := range clients {
		c := &soakClient{delta: i%4 == 1}
		clients[i] = c
		conn := conns[i%len(conns)]
		wg.Add(1)
		if i < soakStuck {
			go func() { defer wg.Done(); stopsReading(ctx, conn) }()
			continue
		}
		go func() { defer wg.Done(); c.run(ctx, conn) }()
	}
	active := clients[soakStuck:]
	start := time.Now()
	converge(t, s, active, 60*time.Second)
	deltas := 0
	for _, c := range active {
		if c.delta {
			deltas++
		}
	}
	t.Logf("%d streams on %d connections (%d state of the world, %d delta, %d that stop reading) up to date in %v",
		streams, len(conns), len(active)-deltas, deltas, soakStuck, time.Since(start).Round(time.Millisecond))
	heapConnected, gConnected := memNow()

	objects, endpoints, samples, heaps := churn(t, dir, duration, s, active)
	last := time.Now()
	converge(t, s, active, 30*time.Second)
	settle := time.Since(last)
	heapEnd, gEnd := memNow()
	for i, c := range active {
		c.mu.Lock()
		if c.err != nil {
			t.Errorf("client %d: %v", i+soakStuck, c.err)
		}
		c.mu.Unlock()
	}

	cancel()
	for _, cc := range conns {
		_ = cc.Close()
	}
	wg.Wait()
	var gAfter int
	var heapAfter uint64
	deadline := time.Now().Add(20 * time.Second)
	for {
		heapAfter, gAfter = memNow()
		if gAfter <= g0+5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("churn for %v: %d object changes, %d endpoint changes; lag samples (fraction of active clients up to date): %s", duration, objects, endpoints, samples)
	t.Logf("all %d active clients on the final content %v after the last change, the %d stuck ones still connected", len(active), settle.Round(time.Millisecond), soakStuck)
	t.Logf("goroutines: %d before clients, %d with clients, %d after churn, %d after they left", g0, gConnected, gEnd, gAfter)
	t.Logf("live heap: %s before clients, %s with clients, %s after churn, %s after they left; during churn, every 10s: %s", mib(heap0), mib(heapConnected), mib(heapEnd), mib(heapAfter), heapList(heaps))
	if gAfter > g0+5 {
		t.Errorf("goroutines did not return to baseline: %d before, %d after", g0, gAfter)
	}
	// Churn holds some state (lingering clusters, the last responses of
	// every stream), so the heap rises from its idle level; it must then
	// stay flat: the second half of the churn no higher than the first.
	if n := len(heaps); n >= 4 {
		first, second := maxOf(heaps[:n/2]), maxOf(heaps[n/2:])
		if second > first+first/4+4<<20 {
			t.Errorf("the heap grew under churn: at most %s in the first half, %s in the second", mib(first), mib(second))
		}
	}
	if heapAfter > heap0+heap0/2+16<<20 {
		t.Errorf("the heap did not come back after the clients left: %s before, %s after", mib(heap0), mib(heapAfter))
	}
}

// stopsReading is a client that asks for clusters over and over and never
// reads an answer: the server's writes to it block once its flow-control
// window is full. Only its own stream may suffer.
func stopsReading(ctx context.Context, cc *grpc.ClientConn) {
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		if st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType}) != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// converge waits until every client holds exactly the cache's clusters and
// load assignments.
func converge(t *testing.T, s *running, clients []*soakClient, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		clusters, endpoints := cacheState(s.Cache())
		behind := 0
		for _, c := range clients {
			if !c.upToDate(clusters, endpoints) {
				behind++
			}
		}
		if behind == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d clients are not on the final content after %v", behind, len(clients), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// churn rewrites EndpointSlices (three changes in four) and proxies (one
// in four) every 50ms for d, and samples every 5s what fraction of the
// clients is up to date with the cache at that moment.
func churn(t *testing.T, dir string, d time.Duration, s *running, clients []*soakClient) (objects, endpoints int, samples string, heaps []uint64) {
	r := rand.New(rand.NewSource(2))
	var fractions []string
	heapTick := time.NewTicker(10 * time.Second)
	defer heapTick.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	sample := time.NewTicker(5 * time.Second)
	defer sample.Stop()
	end := time.After(d)
	for {
		select {
		case <-end:
			return objects, endpoints, strings.Join(fractions, " "), heaps
		case <-heapTick.C:
			h, _ := memNow()
			heaps = append(heaps, h)
		case <-sample.C:
			clusters, eps := cacheState(s.Cache())
			n := 0
			for _, c := range clients {
				if c.upToDate(clusters, eps) {
					n++
				}
			}
			fractions = append(fractions, fmt.Sprintf("%.2f", float64(n)/float64(len(clients))))
		case <-tick.C:
			if r.Intn(4) == 0 {
				i := r.Intn(soakProxies)
				writeFile(t, dir, fmt.Sprintf("proxy-%02d.yaml", i), soakProxy(i, r))
				objects++
			} else {
				i := r.Intn(soakServices)
				writeFile(t, dir, fmt.Sprintf("svc-%02d.yaml", i), soakService(i, r))
				endpoints++
			}
		}
	}
}

func maxOf(xs []uint64) uint64 {
	var m uint64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func heapList(hs []uint64) string {
	var out []string
	for _, h := range hs {
		out = append(out, mib(h))
	}
	return strings.Join(out, ", ")
}

// soakService is a Service with one EndpointSlice of one to four
// endpoints at random addresses.
func soakService(i int, r *rand.Rand) string {
	var eps []string
	for range 1 + r.Intn(4) {
		eps = append(eps, fmt.Sprintf("{addresses: [10.%d.%d.%d], zone: z%d}", i, r.Intn(256), 1+r.Intn(254), r.Intn(2)))
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: svc-%02d, namespace: soak}
spec: {ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc-%02d-a, namespace: soak, labels: {kubernetes.io/service-name: svc-%02d}}
addressType: IPv4
ports: [{port: 8080}]
endpoints: [%s]
`, i, i, i, strings.Join(eps, ", "))
}

// soakProxy is a root with two routes, each split by weight between two
// Services; weights are drawn from a small set, so clusters come and go.
func soakProxy(i int, r *rand.Rand) string {
	route := func(prefix string) string {
		a, b := r.Intn(soakServices), r.Intn(soakServices)
		if a == b {
			b = (a + 1) % soakServices
		}
		return fmt.Sprintf("  - conditions: [{prefix: %s}]\n    services: [{name: svc-%02d, port: 80, weight: %d}, {name: svc-%02d, port: 80, weight: %d}]\n", prefix, a, 1+r.Intn(3), b, 1+r.Intn(3))
	}
	return fmt.Sprintf("apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: p%02d, namespace: soak}\nspec:\n  virtualhost: {fqdn: p%02d.soak.example.com}\n  routes:\n%s%s", i, i, route("/"), route("/api"))
}
