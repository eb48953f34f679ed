package xdstest

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"testing"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// ControlPlane is Switchyard's xDS server with its cache, fed directly.
type ControlPlane struct {
	Cache   *xdscache.Cache
	Metrics *xdscache.Metrics

	addr   string
	tls    *tls.Config
	gs     *grpc.Server
	cancel context.CancelFunc
}

// Start serves a new cache on addr ("127.0.0.1:0" for a free port), with
// TLS when tlsCfg is set, until the test ends.
func Start(t testing.TB, addr string, tlsCfg *tls.Config) *ControlPlane {
	t.Helper()
	cp := &ControlPlane{Cache: xdscache.New(), Metrics: xdscache.NewMetrics(nil), tls: tlsCfg}
	cp.serve(t, addr)
	t.Cleanup(cp.Stop)
	return cp
}

// Addr is the host:port the server listens on.
func (cp *ControlPlane) Addr() string { return cp.addr }

func (cp *ControlPlane) serve(t testing.TB, addr string) {
	t.Helper()
	var lis net.Listener
	var err error
	// A restart on the same port may race the old socket's close.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if lis, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	var opts []grpc.ServerOption
	if cp.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cp.tls)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	gs := grpc.NewServer(opts...)
	cp.gs, cp.cancel, cp.addr = gs, cancel, lis.Addr().String()
	xdscache.Register(ctx, gs, cp.Cache, cp.Metrics, slog.New(slog.DiscardHandler))
	go func() { _ = gs.Serve(lis) }()
}

// Stop ends the server and every stream, as a control plane going down.
// The cache keeps its content.
func (cp *ControlPlane) Stop() {
	if cp.gs != nil {
		cp.gs.Stop()
		cp.cancel()
		cp.gs = nil
	}
}

// Restart serves the same cache on the same port again.
func (cp *ControlPlane) Restart(t testing.TB) {
	t.Helper()
	cp.serve(t, cp.addr)
}

// Set creates or replaces clusters and assignments in one update.
func (cp *ControlPlane) Set(t testing.TB, clusters []*envoy_config_cluster_v3.Cluster, assigns ...*envoy_config_endpoint_v3.ClusterLoadAssignment) {
	t.Helper()
	var changes []xdsres.Change
	for _, c := range clusters {
		changes = append(changes, change(t, resource.ClusterType, c.GetName(), c))
	}
	for _, a := range assigns {
		changes = append(changes, change(t, resource.EndpointType, a.GetClusterName(), a))
	}
	if err := cp.Cache.Update(xdsres.GroupDNS, changes); err != nil {
		t.Fatalf("update: %v", err)
	}
}

// Remove deletes a DNS name: its cluster and its assignment.
func (cp *ControlPlane) Remove(t testing.TB, name string) {
	t.Helper()
	if err := cp.Cache.Update(xdsres.GroupDNS, []xdsres.Change{{TypeURL: resource.ClusterType, Name: name}, {TypeURL: resource.EndpointType, Name: name}}); err != nil {
		t.Fatalf("update: %v", err)
	}
}

func change(t testing.TB, typeURL, name string, m proto.Message) xdsres.Change {
	t.Helper()
	r, err := xdsres.NewResource(m)
	if err != nil {
		t.Fatal(err)
	}
	return xdsres.Change{TypeURL: typeURL, Name: name, Resource: r}
}

// NACKs is how many responses of the type DNS clients rejected.
func (cp *ControlPlane) NACKs(typeURL string) float64 {
	return counterValue(cp.Metrics.NACKs.WithLabelValues(string(xdsres.GroupDNS), xdsres.ShortType(typeURL)))
}

// EDSVersion is the version of the DNS group's assignments, which the
// plugin reports once it applied them.
func (cp *ControlPlane) EDSVersion() string {
	return cp.Cache.Version(xdsres.GroupDNS, resource.EndpointType)
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// Eventually polls cond every 2 ms until it holds, and fails the test
// when timeout passes first; cond describes the state for the message. It
// returns how long it took.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, state := cond()
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %s; last: %s", what, timeout, state)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
