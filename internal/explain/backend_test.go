package explain

import (
	"fmt"
	"math"
	"testing"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// locality builds a locality of n endpoints, the first healthy ones
// HEALTHY and the rest UNHEALTHY, named zone-<i> with addresses 10.0.<zone>.<i>.
func locality(zone string, priority, weight uint32, n, healthy int) *envoy_config_endpoint_v3.LocalityLbEndpoints {
	l := &envoy_config_endpoint_v3.LocalityLbEndpoints{
		Locality:            &envoy_config_core_v3.Locality{Zone: zone},
		Priority:            priority,
		LoadBalancingWeight: wrapperspb.UInt32(weight),
	}
	for i := range n {
		h := envoy_config_core_v3.HealthStatus_HEALTHY
		if i >= healthy {
			h = envoy_config_core_v3.HealthStatus_UNHEALTHY
		}
		l.LbEndpoints = append(l.LbEndpoints, &envoy_config_endpoint_v3.LbEndpoint{
			HealthStatus: h,
			HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: &envoy_config_endpoint_v3.Endpoint{
				Address: &envoy_config_core_v3.Address{Address: &envoy_config_core_v3.Address_SocketAddress{SocketAddress: &envoy_config_core_v3.SocketAddress{
					Address: fmt.Sprintf("%s-%d", zone, i), PortSpecifier: &envoy_config_core_v3.SocketAddress_PortValue{PortValue: 80},
				}}},
			}},
		})
	}
	return l
}

func localityWeighted(panicThreshold *float64) *envoy_config_cluster_v3.Cluster {
	c := &envoy_config_cluster_v3.Cluster{CommonLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig{
		LocalityConfigSpecifier: &envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig_{
			LocalityWeightedLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig_LocalityWeightedLbConfig{},
		},
	}}
	if panicThreshold != nil {
		c.CommonLbConfig.HealthyPanicThreshold = &envoy_type_v3.Percent{Value: *panicThreshold}
	}
	return c
}

func round(v float64) float64 { return math.Round(v*10) / 10 }

func localityShares(ps []PriorityShare) map[string]float64 {
	out := map[string]float64{}
	for _, p := range ps {
		for _, l := range p.Localities {
			out[l.Zone] = round(out[l.Zone] + l.Share)
		}
	}
	return out
}

func loads(ps []PriorityShare) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.Load)
	}
	return out
}

var noPanic = 0.0

// TestEnvoyShares checks the numbers Envoy's load balancer would produce:
// priority spill with the overprovisioning factor 1.4, locality weights
// scaled by availability, and panic mode.
func TestEnvoyShares(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cluster    *envoy_config_cluster_v3.Cluster
		localities []*envoy_config_endpoint_v3.LocalityLbEndpoints
		wantLoads  []int
		want       map[string]float64
	}{{
		// 1 of 2 healthy: 1.4 × 50% = 70% stays, 30% spills to priority 1.
		name:       "priority spill",
		cluster:    localityWeighted(&noPanic),
		localities: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 1, 2, 1), locality("b", 1, 1, 4, 4)},
		wantLoads:  []int{70, 30},
		want:       map[string]float64{"a": 70, "b": 30},
	}, {
		// 3 of 4 healthy is 75%, × 1.4 > 100%: no spill at all.
		name:       "overprovisioning absorbs a little unhealth",
		cluster:    localityWeighted(&noPanic),
		localities: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 1, 4, 3), locality("b", 1, 1, 1, 1)},
		wantLoads:  []int{100, 0},
		want:       map[string]float64{"a": 100, "b": 0},
	}, {
		// Locality a: weight 1 × min(1, 1.4 × 1/4) = 0.35; b: 1 × 1.
		name:       "locality weight scaled by availability",
		cluster:    localityWeighted(&noPanic),
		localities: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 1, 4, 1), locality("b", 0, 1, 4, 4)},
		wantLoads:  []int{100},
		want:       map[string]float64{"a": 25.9, "b": 74.1},
	}, {
		name:       "locality weights",
		cluster:    localityWeighted(&noPanic),
		localities: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 3, 1, 1), locality("b", 0, 1, 1, 1)},
		wantLoads:  []int{100},
		want:       map[string]float64{"a": 75, "b": 25},
	}, {
		// Without locality-weighted load balancing the weights do nothing:
		// the three healthy endpoints share equally.
		name:       "locality weights ignored without locality_weighted_lb_config",
		cluster:    &envoy_config_cluster_v3.Cluster{CommonLbConfig: &envoy_config_cluster_v3.Cluster_CommonLbConfig{HealthyPanicThreshold: &envoy_type_v3.Percent{}}},
		localities: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 3, 1, 1), locality("b", 0, 1, 2, 2)},
		wantLoads:  []int{100},
		want:       map[string]float64{"a": 33.3, "b": 66.7},
	}, {
		// Default panic threshold 50%: 1 of 4 healthy is below it, so Envoy
		// spreads over every endpoint, healthy or not.
		name:       "panic",
		cluster:    &envoy_config_cluster_v3.Cluster{},
		localities: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 1, 4, 1)},
		wantLoads:  []int{100},
		want:       map[string]float64{"a": 100},
	}, {
		name:       "nothing healthy and no panic: 503",
		cluster:    localityWeighted(&noPanic),
		localities: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 1, 2, 0)},
		wantLoads:  []int{0},
		want:       map[string]float64{"a": 0},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ps := envoyShares(tc.cluster, &envoy_config_endpoint_v3.ClusterLoadAssignment{Endpoints: tc.localities}, 100)
			if got := loads(ps); fmt.Sprint(got) != fmt.Sprint(tc.wantLoads) {
				t.Errorf("priority loads %v, want %v", got, tc.wantLoads)
			}
			if got := localityShares(ps); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("locality shares %v, want %v", got, tc.want)
			}
		})
	}
	ps := envoyShares(&envoy_config_cluster_v3.Cluster{}, &envoy_config_endpoint_v3.ClusterLoadAssignment{Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{locality("a", 0, 1, 4, 1)}}, 100)
	if !ps[0].Panic {
		t.Error("1 of 4 healthy under the default threshold is not reported as panic")
	}
	for _, e := range ps[0].Localities[0].Endpoints {
		if round(e.Share) != 25 {
			t.Errorf("in panic, endpoint %s gets %.1f%%, want 25%%", e.Address, e.Share)
		}
	}
}

// TestGRPCShares checks grpc-go's policy: the first priority with a usable
// endpoint takes everything, localities split by weight, endpoints evenly.
func TestGRPCShares(t *testing.T) {
	cla := &envoy_config_endpoint_v3.ClusterLoadAssignment{Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
		locality("a", 0, 3, 4, 1), locality("b", 0, 1, 2, 2), locality("c", 1, 1, 1, 1),
	}}
	ps := grpcShares(cla, 100)
	if got := loads(ps); fmt.Sprint(got) != "[100 0]" {
		t.Errorf("priority loads %v, want [100 0]: gRPC does not spill", got)
	}
	if got := localityShares(ps); fmt.Sprint(got) != fmt.Sprint(map[string]float64{"a": 75, "b": 25, "c": 0}) {
		t.Errorf("locality shares %v: gRPC weighs localities without their health", got)
	}
}
