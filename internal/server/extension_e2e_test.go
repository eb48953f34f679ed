package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	envoy_filter_http_ext_authz_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// extensionYAML is an ExtensionService over Services a and b, weighted
// 75/25, and a TLS root proxy admin.example.com with the given routes,
// whose authorization uses it (with consent). The certificate is the one
// the golden tests share.
func extensionYAML(t *testing.T, routes string) string {
	t.Helper()
	indent := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return "    " + strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n    ")
	}
	return fmt.Sprintf(`apiVersion: switchyard.dev/v1alpha1
kind: ExtensionService
metadata: {name: authz, namespace: auth}
spec:
  protocol: h2c
  services: [{name: a, port: 80, weight: 75}, {name: b, port: 80, weight: 25}]
  allowedNamespaces: [admin]
---
apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: admin, namespace: admin}
spec:
  virtualhost:
    fqdn: admin.example.com
    tls: {secretName: tls}
    authorization:
      extensionRef: {namespace: auth, name: authz}
  routes:
%s
---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: admin}
type: kubernetes.io/tls
stringData:
  tls.crt: |
%s
  tls.key: |
%s
`, routes, indent("../translator/testdata/certs/tls.crt"), indent("../translator/testdata/certs/tls.key"))
}

// TestExtensionServiceWeighting proves the weighting of an ExtensionService's
// cluster with a real client. Envoy calls that cluster for ext_authz, and
// no Envoy can run here; gRPC's xDS client cannot run ext_authz, and the
// grpc group leaves authorization clusters out. So the test builds the DAG
// and the Envoy translation itself, checks that Envoy's ext_authz filter
// names the cluster, then serves that very cluster to gRPC's client through
// xdscache, behind a test route (an API listener and route configuration
// shaped by the translator's own grpc functions): two targets weighted
// 75/25, target a with a backend in each of two zones, must split 2,400
// RPCs within 5 points.
func TestExtensionServiceWeighting(t *testing.T) {
	a1, a2, b := grpcpeer.StartBackend(t, "a1"), grpcpeer.StartBackend(t, "a2"), grpcpeer.StartBackend(t, "b")
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", serviceYAML("auth", "a", endpoint{a1, "z1"}, endpoint{a2, "z2"}))
	writeFile(t, dir, "b.yaml", serviceYAML("auth", "b", endpoint{b, "z1"}))
	writeFile(t, dir, "console.yaml", serviceYAML("admin", "console"))
	writeFile(t, dir, "authz.yaml", extensionYAML(t, "  - services: [{name: console, port: 80}]"))
	snap, res := buildValid(t, dir)
	if len(res.DAG.SecureVirtualHosts) != 1 || res.DAG.SecureVirtualHosts[0].Authorization == nil {
		t.Fatal("admin.example.com should be served with its authorization")
	}
	cluster := res.DAG.SecureVirtualHosts[0].Authorization.Cluster
	opts := translator.DefaultOptions()
	if got := extAuthzCluster(t, translator.Envoy(res.DAG, snap, opts)); got != cluster.Name {
		t.Fatalf("Envoy's ext_authz calls %q, not the ExtensionService's cluster %q", got, cluster.Name)
	}
	envoyCLA := translator.LoadAssignment(cluster.Name, &cluster.Spec, snap, opts)
	grpcCLA := translator.GRPCLoadAssignment(cluster.Name, &cluster.Spec, snap, opts)
	if !proto.Equal(envoyCLA, grpcCLA) {
		t.Fatalf("gRPC would get other weights than Envoy:\nenvoy %v\ngrpc  %v", envoyCLA, grpcCLA)
	}

	const target = "authz-weighting.test"
	xdsAddr, nacks := serveTestRoute(t, target, cluster, snap, opts)
	c := grpcClientAt(t, xdsAddr, target)
	warmUp(t, c, "a1", "a2", "b")
	const rpcs = 2400
	counts, failed := tally(context.Background(), c, rpcs)
	if failed > 0 {
		t.Fatalf("%d of %d RPCs failed", failed, rpcs)
	}
	got := shares(counts, map[string]string{"a1": "a", "a2": "a", "b": "b"})
	t.Logf("ExtensionService split over %d RPCs: a %.1f%%, b %.1f%% (backends %v)", rpcs, got["a"], got["b"], counts)
	checkShares(t, got, map[string]float64{"a": 75, "b": 25})
	if n := nacks(); n > 0 {
		t.Errorf("gRPC's client rejected %v responses", n)
	}
}

// buildValid loads a directory and builds its DAG, failing the test
// unless every object is valid.
func buildValid(t *testing.T, dir string) (*objects.Snapshot, *dag.Result) {
	t.Helper()
	snap, problems, err := dirsource.Load(dir)
	if err != nil || len(problems) > 0 {
		t.Fatalf("loading the manifests: %v %v", err, problems)
	}
	res := dag.Build(snap, dag.Options{})
	for _, st := range res.Statuses {
		if len(st.Errors) > 0 {
			t.Fatalf("%v: %s", st.Key, st.Description)
		}
	}
	return snap, res
}

// TestGRPCClientCannotBypassAuthorization serves an authorized host through
// the real control plane to gRPC's xDS client, which talks to backends
// directly and cannot run ext_authz. The method whose route opts out of
// authorization reaches the backend (which answers UNIMPLEMENTED); the
// route that needs a check is a 403 direct response in the grpc group, so
// its RPCs fail UNAVAILABLE without ever leaving the client.
func TestGRPCClientCannotBypassAuthorization(t *testing.T) {
	app, authz := grpcpeer.StartBackend(t, "app"), grpcpeer.StartBackend(t, "authz")
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", serviceYAML("auth", "a", endpoint{authz, "z1"}))
	writeFile(t, dir, "b.yaml", serviceYAML("auth", "b", endpoint{authz, "z1"}))
	writeFile(t, dir, "app.yaml", serviceYAML("admin", "app", endpoint{app, "z1"}))
	writeFile(t, dir, "authz.yaml", extensionYAML(t, `  - conditions: [{prefix: /grpc.testing.TestService/EmptyCall}]
    services: [{name: app, port: 80}]
    authPolicy: {disabled: true}
  - services: [{name: app, port: 80}]`))
	buildValid(t, dir) // the check below must not pass because the host failed closed
	s := controlPlane(t, dir)
	c := grpcClient(t, s, "admin.example.com")

	waitFor(t, 10*time.Second, "the opted-out method to reach the backend", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.EmptyCall(ctx, &testgrpc.Empty{})
		return status.Code(err) == codes.Unimplemented
	})
	for range 50 {
		id, err := call(context.Background(), c)
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("a checked RPC got backend %q, error %v; want UNAVAILABLE from the client's own route", id, err)
		}
	}
	noNACKs(t, s)
}

// extAuthzCluster returns the cluster the ext_authz filter of the HTTPS
// listener's first filter chain calls.
func extAuthzCluster(t *testing.T, r *translator.Resources) string {
	t.Helper()
	for _, l := range r.Listeners {
		if l.GetName() != translator.HTTPSListenerName {
			continue
		}
		hcm := &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{}
		if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(hcm); err != nil {
			t.Fatal(err)
		}
		for _, f := range hcm.GetHttpFilters() {
			az := &envoy_filter_http_ext_authz_v3.ExtAuthz{}
			if f.GetTypedConfig().MessageIs(az) {
				if err := f.GetTypedConfig().UnmarshalTo(az); err != nil {
					t.Fatal(err)
				}
				return az.GetGrpcService().GetEnvoyGrpc().GetClusterName()
			}
		}
	}
	t.Fatal("no ext_authz filter on the HTTPS listener")
	return ""
}

// serveTestRoute serves, to the grpc group of a fresh xDS server, one host
// whose only route forwards everything to cluster, with the cluster and
// its load assignment as the grpc group shapes them. It returns the
// server's address and a count of NACKs.
func serveTestRoute(t *testing.T, host string, cluster *dag.Cluster, snap *objects.Snapshot, opts translator.Options) (net.Addr, func() float64) {
	t.Helper()
	h := translator.GRPCHost{FQDN: host, Plain: &dag.VirtualHost{FQDN: host, Routes: []*dag.Route{{
		PathMatch: dag.PathMatch{Kind: dag.PathPrefix, Value: "/"},
		Forward:   &dag.Forward{Cluster: cluster},
	}}}}
	var msgs []proto.Message
	for _, l := range translator.GRPCListeners(h) {
		msgs = append(msgs, l)
	}
	msgs = append(msgs, translator.GRPCRouteConfig(h), translator.GRPCCluster(cluster, opts),
		translator.GRPCLoadAssignment(cluster.Name, &cluster.Spec, snap, opts))
	byType := map[string][]*xdsres.Resource{}
	for _, m := range msgs {
		r, err := xdsres.NewResource(m)
		if err != nil {
			t.Fatal(err)
		}
		byType[xdsres.TypeURL(m)] = append(byType[xdsres.TypeURL(m)], r)
	}
	cache := xdscache.New()
	if err := cache.Replace(xdsres.GroupGRPC, byType); err != nil {
		t.Fatal(err)
	}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	metrics := xdscache.NewMetrics(reg)
	ctx, cancel := context.WithCancel(context.Background())
	gs := grpc.NewServer()
	xdscache.Register(ctx, gs, cache, metrics, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() {
		cancel()
		gs.Stop()
	})
	nacks := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for _, mf := range mfs {
			if mf.GetName() == "switchyard_xds_nacks_total" {
				for _, m := range mf.GetMetric() {
					total += m.GetCounter().GetValue()
				}
			}
		}
		return total
	}
	return lis.Addr(), nacks
}
