package dag

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// benchClusterSpec is a cluster as a typical route makes it: three
// weighted backends, a health check and an idle timeout.
func benchClusterSpec() ClusterSpec {
	idle := 90 * time.Second
	return ClusterSpec{
		Backends: []Backend{
			{Service: types.NamespacedName{Namespace: "team-0042", Name: "checkout-api"}, Port: 8080, Weight: 60},
			{Service: types.NamespacedName{Namespace: "team-0042", Name: "checkout-canary"}, Port: 8080, Weight: 30},
			{Service: types.NamespacedName{Namespace: "team-0042", Name: "checkout-legacy"}, Port: 80, Weight: 10},
		},
		LoadBalancer: LBWeightedLeastRequest,
		HealthCheck: &HealthCheck{
			Path: "/healthz", Host: "checkout.example.com",
			Interval: 5 * time.Second, Timeout: 2 * time.Second,
			UnhealthyThreshold: 3, HealthyThreshold: 2,
		},
		IdleConnectionTimeout: &idle,
	}
}

// BenchmarkClusterName names one realistic spec: the builder names every
// cluster of every route this way.
func BenchmarkClusterName(b *testing.B) {
	spec := benchClusterSpec()
	b.ReportAllocs()
	for b.Loop() {
		_ = clusterName(spec)
	}
}
