package translator

import (
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// slowStartAggressionKey is the runtime key Envoy requires next to the
// aggression's value; nothing sets it, so the value applies.
const slowStartAggressionKey = "switchyard.slow_start.aggression"

// slowStartLbConfig returns the cluster's slow start, in the LB config of
// its policy (round robin or least request: the DAG allows no other), or
// nil.
func slowStartLbConfig(spec *dag.ClusterSpec) (rr *envoy_config_cluster_v3.Cluster_RoundRobinLbConfig_, lr *envoy_config_cluster_v3.Cluster_LeastRequestLbConfig_) {
	ss := spec.SlowStart
	if ss == nil {
		return nil, nil
	}
	cfg := &envoy_config_cluster_v3.Cluster_SlowStartConfig{
		SlowStartWindow:  duration(ss.Window),
		Aggression:       &envoy_config_core_v3.RuntimeDouble{DefaultValue: ss.Aggression, RuntimeKey: slowStartAggressionKey},
		MinWeightPercent: &envoy_type_v3.Percent{Value: float64(ss.MinWeightPercent)},
	}
	if spec.LoadBalancer == dag.LBWeightedLeastRequest {
		return nil, &envoy_config_cluster_v3.Cluster_LeastRequestLbConfig_{
			LeastRequestLbConfig: &envoy_config_cluster_v3.Cluster_LeastRequestLbConfig{SlowStartConfig: cfg},
		}
	}
	return &envoy_config_cluster_v3.Cluster_RoundRobinLbConfig_{
		RoundRobinLbConfig: &envoy_config_cluster_v3.Cluster_RoundRobinLbConfig{SlowStartConfig: cfg},
	}, nil
}

// expectedStatuses maps a health check's healthy statuses.
func expectedStatuses(rs []dag.StatusRange) []*envoy_type_v3.Int64Range {
	var out []*envoy_type_v3.Int64Range
	for _, r := range rs {
		out = append(out, &envoy_type_v3.Int64Range{Start: r.Start, End: r.End})
	}
	return out
}
