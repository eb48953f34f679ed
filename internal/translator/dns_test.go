package translator

import (
	"testing"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

func TestDNS(t *testing.T) {
	web := testCluster("web/0123", backend("shop", "web", 80, 3, 0), backend("shop", "web-canary", 80, 1, 0))
	web.Spec.LoadBalancer = dag.LBRandom
	web.Spec.Protocol = "h2"
	web.Spec.HealthCheck = &dag.HealthCheck{Path: "/healthz"}
	web.Spec.UpstreamTLS = &dag.UpstreamTLS{CASecret: "shop/ca/ca", SubjectName: "web.shop"}
	standby := testCluster("db/4567", backend("shop", "db", 5432, 1, 0), backend("shop", "db-replica", 5432, 1, 1))
	d := &dag.DAG{
		Clusters: []*dag.Cluster{standby, web},
		DNSNames: []dag.DNSName{
			{Name: "web.shop", Cluster: web},
			{Name: "checkout.web.shop", Cluster: web},
			{Name: "db.shop", Cluster: standby},
			{Name: "db.shop", Cluster: web}, // a later duplicate is ignored
			{Name: "none.shop"},             // no cluster: ignored
		},
	}
	snap := newSnapshot(
		service("shop", "web", servicePort("http", 80)),
		slice("shop", "web", "web-1", namedPort("http", 8080), ready("10.0.0.1", "a"), terminating("10.0.0.2", "a"), ready("10.0.0.3", "b")),
		service("shop", "web-canary", servicePort("http", 80)),
		slice("shop", "web-canary", "web-canary-1", namedPort("http", 8080), ready("10.0.1.1", "b")),
		service("shop", "db", servicePort("pg", 5432)),
		slice("shop", "db", "db-1", namedPort("pg", 5432), notReady("10.0.2.1", "a")),
		service("shop", "db-replica", servicePort("pg", 5432)),
		slice("shop", "db-replica", "db-replica-1", namedPort("pg", 5432), ready("10.0.3.1", "b")),
	)
	res := DNS(d, snap, DefaultOptions())
	validateAll(t, res)

	if n := len(res.Listeners) + len(res.ScopedRoutes) + len(res.Routes) + len(res.Secrets); n != 0 {
		t.Errorf("got %d listeners, scopes, routes and secrets, want none", n)
	}
	var names, claNames []string
	for _, c := range res.Clusters {
		names = append(names, c.GetName())
		if got := c.GetEdsClusterConfig().GetServiceName(); got != c.GetName() {
			t.Errorf("cluster %s: service_name %q", c.GetName(), got)
		}
		if c.GetCommonLbConfig().GetLocalityWeightedLbConfig() == nil {
			t.Errorf("cluster %s: no locality_weighted_lb_config", c.GetName())
		}
	}
	for _, e := range res.Endpoints {
		claNames = append(claNames, e.GetClusterName())
	}
	want := []string{"checkout.web.shop", "db.shop", "web.shop"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("cluster names (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, claNames); d != "" {
		t.Errorf("load assignment names (-want +got):\n%s", d)
	}

	// web.shop: Envoy's cluster under the DNS name, without anything that
	// is about connecting to the backends.
	wantWeb := &envoy_config_cluster_v3.Cluster{
		Name:                 "web.shop",
		ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_EDS},
		EdsClusterConfig:     &envoy_config_cluster_v3.Cluster_EdsClusterConfig{EdsConfig: adsConfigSource(), ServiceName: "web.shop"},
		LbPolicy:             envoy_config_cluster_v3.Cluster_RANDOM,
		CommonLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig{
			LocalityConfigSpecifier: &envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig_{
				LocalityWeightedLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig{},
			},
			HealthyPanicThreshold: &envoy_type_v3.Percent{Value: 0},
		},
	}
	if d := diff(wantWeb, res.Clusters[2]); d != "" {
		t.Errorf("web.shop cluster (-want +got):\n%s", d)
	}

	// Health is explicit, the terminating endpoint is DRAINING, and the
	// services split 3:1 (K = 1000; web's 3000 go half to each zone, one
	// healthy endpoint each).
	wantCLA := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "web.shop", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
		loc("a", "shop/web", 0, 1500, lbe("10.0.0.1", 8080, healthy), lbe("10.0.0.2", 8080, draining)),
		loc("b", "shop/web", 0, 1500, lbe("10.0.0.3", 8080, healthy)),
		loc("b", "shop/web-canary", 0, 1000, lbe("10.0.1.1", 8080, healthy)),
	}}
	if d := diff(wantCLA, res.Endpoints[2]); d != "" {
		t.Errorf("web.shop load assignment (-want +got):\n%s", d)
	}

	// db.shop: the primary has no ready endpoint, so the standby priority
	// stays in place with its endpoint.
	db := res.Endpoints[1].GetEndpoints()
	if len(db) != 2 || db[0].GetPriority() != 0 || len(db[0].GetLbEndpoints()) != 0 || db[1].GetPriority() != 1 {
		t.Errorf("db.shop localities: %v", db)
	}
}

func TestDNSClusterKeepsTheSpecPolicy(t *testing.T) {
	for lb, want := range map[string]envoy_config_cluster_v3.Cluster_LbPolicy{
		dag.LBRoundRobin:           envoy_config_cluster_v3.Cluster_ROUND_ROBIN,
		dag.LBRandom:               envoy_config_cluster_v3.Cluster_RANDOM,
		dag.LBWeightedLeastRequest: envoy_config_cluster_v3.Cluster_LEAST_REQUEST,
		dag.LBRequestHash:          envoy_config_cluster_v3.Cluster_RING_HASH,
	} {
		c := testCluster("c")
		c.Spec.LoadBalancer = lb
		c.Spec.IdleConnectionTimeout = dur(time.Minute)
		c.Spec.CircuitBreakers = &dag.CircuitBreakers{MaxRequests: 5}
		got := DNSCluster(dag.DNSName{Name: "n.ns", Cluster: c}, DefaultOptions())
		if got.GetLbPolicy() != want {
			t.Errorf("%s: lb_policy %v, want %v", lb, got.GetLbPolicy(), want)
		}
		if got.GetTypedExtensionProtocolOptions() != nil || got.GetCircuitBreakers() != nil || got.GetConnectTimeout() != nil {
			t.Errorf("%s: connection settings left in: %v", lb, got)
		}
	}
}

func TestDNSEmpty(t *testing.T) {
	for name, d := range map[string]*dag.DAG{"nil": nil, "empty": {}} {
		t.Run(name, func(t *testing.T) {
			if d := diff(&Resources{}, DNS(d, nil, DefaultOptions())); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestDNSDeterministic(t *testing.T) {
	d, snap := fullDAG()
	d.DNSNames = []dag.DNSName{{Name: "b.ns", Cluster: d.Clusters[0]}, {Name: "a.ns", Cluster: d.Clusters[1]}}
	first := wireBytes(t, DNS(d, snap, DefaultOptions()))
	for range 10 {
		again := wireBytes(t, DNS(d, snap, DefaultOptions()))
		if d := cmp.Diff(first, again); d != "" {
			t.Fatalf("differs between runs:\n%s", d)
		}
	}
}
