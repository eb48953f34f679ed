package etcdsource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/etcdsource"
	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

// statusOf reads the status Switchyard wrote for an HTTPProxy, "" when
// there is none.
func statusOf(t *testing.T, c *clientv3.Client, ns, name string) string {
	t.Helper()
	resp, err := c.Get(context.Background(), prefix+"status/httpproxy/"+ns+"/"+name)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return ""
	}
	var v struct {
		CurrentStatus string `json:"currentStatus"`
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &v); err != nil {
		t.Fatalf("status value %q: %v", resp.Kvs[0].Value, err)
	}
	return v.CurrentStatus
}

// TestServeFromEtcd serves what etcd holds to gRPC's own xDS client:
// a create, an update and a delete each reach it, and status is written
// back under the prefix.
func TestServeFromEtcd(t *testing.T) {
	e := etcdtest.Start(t)
	c := e.Client(t)
	a, b := grpcpeer.StartBackend(t, "a"), grpcpeer.StartBackend(t, "b")
	putBackendService(t, c, "shop", "a", a)
	putBackendService(t, c, "shop", "b", b)
	r := startReplica(t, e, "r1", 2)
	g := grpcpeer.Client(t, r.srv.XDSAddr(), "etcd-"+t.Name(), "app.example.com")

	put(t, c, prefix+"httpproxy/shop/app", proxyYAML("shop", "app", "app.example.com", "a"))
	testenv.WaitFor(t, 30*time.Second, "the created proxy to route to a", func() bool { return grpcpeer.Answer(g) == "a" })
	testenv.WaitFor(t, 10*time.Second, "status valid", func() bool { return statusOf(t, c, "shop", "app") == "valid" })

	put(t, c, prefix+"httpproxy/shop/app", proxyYAML("shop", "app", "app.example.com", "b"))
	testenv.WaitFor(t, 30*time.Second, "the updated proxy to route to b", func() bool { return grpcpeer.Answer(g) == "b" })

	if _, err := c.Delete(context.Background(), prefix+"httpproxy/shop/app"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the deleted proxy to stop answering", func() bool { return strings.HasPrefix(grpcpeer.Answer(g), "error") })
	testenv.WaitFor(t, 10*time.Second, "its status to go", func() bool { return statusOf(t, c, "shop", "app") == "" })

	put(t, c, prefix+"httpproxy/shop/broken", proxyYAML("shop", "broken", "broken.example.com", "missing"))
	testenv.WaitFor(t, 10*time.Second, "status invalid for a route to a missing Service", func() bool { return statusOf(t, c, "shop", "broken") == "invalid" })

	// A value that does not load never reaches a build: its status says why.
	put(t, c, prefix+"httpproxy/shop/typo", "apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: typo, namespace: shop}\nspec: {routez: []}\n")
	testenv.WaitFor(t, 10*time.Second, "status invalid naming the unknown field", func() bool {
		resp, err := c.Get(context.Background(), prefix+"status/httpproxy/shop/typo")
		return err == nil && len(resp.Kvs) == 1 && strings.Contains(string(resp.Kvs[0].Value), `"currentStatus":"invalid"`) &&
			strings.Contains(string(resp.Kvs[0].Value), "spec.routez")
	})
	put(t, c, prefix+"httpproxy/shop/typo", proxyYAML("shop", "typo", "typo.example.com", "b"))
	testenv.WaitFor(t, 10*time.Second, "the fixed value's own status", func() bool { return statusOf(t, c, "shop", "typo") == "valid" })
}

// clusterNames lists the clusters of a CDS response.
func clusterNames(t *testing.T, resp *envoy_service_discovery_v3.DiscoveryResponse) []string {
	t.Helper()
	var names []string
	for _, a := range resp.Resources {
		var cl envoy_config_cluster_v3.Cluster
		if err := a.UnmarshalTo(&cl); err != nil {
			t.Fatal(err)
		}
		names = append(names, cl.Name)
	}
	return names
}

func hasCluster(t *testing.T, resp *envoy_service_discovery_v3.DiscoveryResponse, part string) bool {
	return slices.ContainsFunc(clusterNames(t, resp), func(n string) bool { return strings.Contains(n, part) })
}

// TestWriteToADSLatency measures how long an etcd write takes to reach an
// ADS client, holdoff included: the time from the Put returning to the
// CDS response that carries the new cluster.
func TestWriteToADSLatency(t *testing.T) {
	e := etcdtest.Start(t)
	c := e.Client(t)
	r := startReplica(t, e, "r1", 2)
	ads := openADS(t, r, resource.ClusterType)
	ads.until(t, 10*time.Second, "the first CDS response", func(*envoy_service_discovery_v3.DiscoveryResponse) bool { return true })
	var took []time.Duration
	for i := range 5 {
		svc := fmt.Sprintf("s%d", i)
		put(t, c, serviceKey("shop", svc), serviceJSON("shop", svc, 80))
		start := time.Now()
		put(t, c, prefix+"httpproxy/shop/"+svc, proxyYAML("shop", svc, svc+".example.com", svc))
		ads.until(t, 10*time.Second, "cluster "+svc, func(resp *envoy_service_discovery_v3.DiscoveryResponse) bool {
			return hasCluster(t, resp, "shop/"+svc+"/")
		})
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("etcd write to ADS response (holdoff %v): min %v, median %v, max %v", 100*time.Millisecond, took[0], took[len(took)/2], took[len(took)-1])
}

// TestLoad10000 loads 10,000 objects from etcd: 2,000 HTTPProxies, each
// routing to two of 4,000 Services with an EndpointSlice each. Every
// route must be served (a route's services share one cluster).
func TestLoad10000(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 keys")
	}
	e := etcdtest.Start(t)
	c := e.Client(t)
	const proxies = 2000
	var ops []clientv3.Op
	flush := func() {
		if _, err := c.Txn(context.Background()).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range 2 * proxies {
		name := fmt.Sprintf("s%d", i)
		ops = append(ops,
			clientv3.OpPut(serviceKey("load", name), serviceJSON("load", name, 80)),
			clientv3.OpPut(prefix+"endpointslice/load/"+name, fmt.Sprintf(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":%q,"namespace":"load","labels":{"kubernetes.io/service-name":%q}},"addressType":"IPv4","ports":[{"port":8080}],"endpoints":[{"addresses":["10.0.%d.%d"]}]}`, name, name, i/250, i%250+1)))
		if len(ops) >= 100 {
			flush()
		}
	}
	for i := range proxies {
		ops = append(ops, clientv3.OpPut(prefix+fmt.Sprintf("httpproxy/load/p%d", i), fmt.Sprintf(`apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: p%d, namespace: load}
spec:
  virtualhost: {fqdn: p%d.example.com}
  routes:
  - services: [{name: s%d, port: 80}, {name: s%d, port: 80}]
`, i, i, 2*i, 2*i+1)))
		if len(ops) >= 100 {
			flush()
		}
	}
	if len(ops) > 0 {
		flush()
	}

	start := time.Now()
	src := etcdsource.New(etcdsource.Config{Client: c, Prefix: prefix})
	initial, err := src.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	listed := time.Since(start)
	if len(initial) != 10000 || len(src.Problems()) != 0 {
		t.Fatalf("initial load: %d objects, %d problems (%v), want 10000 and none", len(initial), len(src.Problems()), src.Problems())
	}

	start = time.Now()
	r := startReplica(t, e, "r1", 2)
	serving := time.Since(start)
	resp := openADS(t, r, resource.ClusterType).until(t, 30*time.Second, "the first CDS response", func(*envoy_service_discovery_v3.DiscoveryResponse) bool { return true })
	if n := len(resp.Resources); n != proxies {
		t.Errorf("CDS has %d clusters, want %d", n, proxies)
	}
	t.Logf("10,000 objects: listed and decoded in %v; first build served after %v", listed, serving)
}

// TestReplicasShareEtcd runs two replicas on one etcd: they serve
// byte-identical clusters and listeners with the same versions, only the lease holder writes
// status, and when it dies (its client closed, no resignation) the other
// takes over within the lease's TTL.
func TestReplicasShareEtcd(t *testing.T) {
	e := etcdtest.Start(t)
	c := e.Client(t)
	a := grpcpeer.StartBackend(t, "a")
	putBackendService(t, c, "shop", "a", a)
	put(t, c, prefix+"httpproxy/shop/app", proxyYAML("shop", "app", "app.example.com", "a"))
	r1 := startReplica(t, e, "r1", 2)
	testenv.WaitFor(t, 10*time.Second, "r1 to lead", r1.status.Leading)
	r2 := startReplica(t, e, "r2", 2)

	for _, typ := range []string{resource.ClusterType, resource.ListenerType} {
		got1 := openADS(t, r1, typ).until(t, 10*time.Second, "r1's "+typ, func(*envoy_service_discovery_v3.DiscoveryResponse) bool { return true })
		got2 := openADS(t, r2, typ).until(t, 10*time.Second, "r2's "+typ, func(*envoy_service_discovery_v3.DiscoveryResponse) bool { return true })
		if got1.VersionInfo != got2.VersionInfo || len(got1.Resources) != len(got2.Resources) || len(got1.Resources) == 0 {
			t.Errorf("%s: r1 serves version %s (%d resources), r2 version %s (%d)", typ, got1.VersionInfo, len(got1.Resources), got2.VersionInfo, len(got2.Resources))
			continue
		}
		for i := range got1.Resources {
			if !proto.Equal(got1.Resources[i], got2.Resources[i]) {
				t.Errorf("%s: resource %d differs between the replicas", typ, i)
			}
		}
	}
	testenv.WaitFor(t, 10*time.Second, "r1 to write status", func() bool { return statusOf(t, c, "shop", "app") == "valid" })
	if r2.status.Leading() || r2.status.Writes() != 0 {
		t.Errorf("r2 leads %v and wrote %d status keys; only r1 may write", r2.status.Leading(), r2.status.Writes())
	}

	// r1 dies: its lease is no longer renewed, and nothing resigns it.
	_ = r1.client.Close()
	testenv.WaitFor(t, 30*time.Second, "r2 to take over status writing once r1's lease expires", r2.status.Leading)
	put(t, c, prefix+"httpproxy/shop/app", proxyYAML("shop", "app", "app.example.com", "missing"))
	// r2's counter moves after its transaction returns, so wait for both;
	// a write by anyone else would leave the counter at 0 and time out.
	testenv.WaitFor(t, 10*time.Second, "r2 to write the new status", func() bool {
		return statusOf(t, c, "shop", "app") == "invalid" && r2.status.Writes() > 0
	})
}
