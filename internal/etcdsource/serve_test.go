package etcdsource_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/switchyard-dev/switchyard/internal/etcdsource"
	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/pipeline"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/testenv"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// replica is one Switchyard serving from etcd, wired as
// `switchyard serve --etcd-endpoints` wires it, with its own client.
type replica struct {
	srv    *server.Server
	src    *etcdsource.Source
	status *etcdsource.StatusWriter
	client *clientv3.Client
	stop   func()
}

func startReplica(t *testing.T, e *etcdtest.Server, name string, leaseTTL int) *replica {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{client: c}
	r.status = etcdsource.NewStatusWriter(etcdsource.StatusConfig{Client: c, Prefix: prefix, Identity: name, LeaseTTL: leaseTTL})
	r.src = etcdsource.New(etcdsource.Config{Client: c, Prefix: prefix, OnProblems: r.status.SetProblems, ProbeInterval: 200 * time.Millisecond, ProbeTimeout: time.Second})
	r.srv = server.New(server.Config{XDSAddress: "127.0.0.1:0", OnStatuses: r.status.Apply, ReadyDetail: r.src.ReadyDetail,
		Pipeline: pipeline.Config{Translator: translator.DefaultOptions()}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- r.status.Run(ctx) }()
	go func() { done <- r.srv.Run(ctx, r.src) }()
	r.stop = func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("replica %s: %v", name, err)
			}
		}
		_ = c.Close()
	}
	t.Cleanup(r.stop)
	testenv.WaitFor(t, 60*time.Second, "replica "+name+" to serve xDS", func() bool { return r.srv.XDSAddr() != nil })
	return r
}

// putBackendService stores a Service and its EndpointSlice pointing at b.
func putBackendService(t *testing.T, c *clientv3.Client, ns, name string, b *grpcpeer.Backend) {
	t.Helper()
	put(t, c, serviceKey(ns, name), fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q,"namespace":%q},"spec":{"ports":[{"name":"grpc","port":80,"targetPort":8080}]}}`, name, ns))
	put(t, c, prefix+"endpointslice/"+ns+"/"+name, fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s, namespace: %s, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
ports: [{name: grpc, port: %d}]
endpoints:
- addresses: [127.0.0.1]
  conditions: {ready: true}
`, name, ns, name, b.Port))
}

func proxyYAML(ns, name, fqdn, service string) string {
	return fmt.Sprintf(`apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: %s, namespace: %s}
spec:
  virtualhost: {fqdn: %s}
  routes:
  - services: [{name: %s, port: 80}]
`, name, ns, fqdn, service)
}

// adsStream is a raw state-of-the-world ADS stream of an Envoy node.
type adsStream struct {
	stream envoy_service_discovery_v3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	recv   chan *envoy_service_discovery_v3.DiscoveryResponse
}

func openADS(t *testing.T, r *replica, typeURL string) *adsStream {
	t.Helper()
	cc, err := grpc.NewClient(r.srv.XDSAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); _ = cc.Close() })
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &envoy_config_core_v3.Node{Id: "envoy-" + t.Name(), UserAgentName: "envoy"}
	if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: typeURL}); err != nil {
		t.Fatal(err)
	}
	a := &adsStream{stream: st, recv: make(chan *envoy_service_discovery_v3.DiscoveryResponse, 64)}
	go func() {
		defer close(a.recv)
		for {
			resp, err := st.Recv()
			if err != nil {
				return
			}
			// ACK, so that the server sends the next version.
			_ = st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: typeURL, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce})
			a.recv <- resp
		}
	}()
	return a
}

// until returns the first response that satisfies ok.
func (a *adsStream) until(t *testing.T, d time.Duration, what string, ok func(*envoy_service_discovery_v3.DiscoveryResponse) bool) *envoy_service_discovery_v3.DiscoveryResponse {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case resp, open := <-a.recv:
			if !open {
				t.Fatalf("ADS stream ended waiting for %s", what)
			}
			if ok(resp) {
				return resp
			}
		case <-timeout:
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}
