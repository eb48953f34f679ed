package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

// clusterClient is an Envoy-group ADS client of clusters that ACKs or
// NACKs each response on command.
type clusterClient struct {
	t    *testing.T
	st   envoy_service_discovery_v3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	recv chan *envoy_service_discovery_v3.DiscoveryResponse
}

var kubeEnvoyNode = &envoy_config_core_v3.Node{Id: "envoy-kube", UserAgentName: "envoy"}

func newClusterClient(t *testing.T, addr string) *clusterClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); _ = cc.Close() })
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &clusterClient{t: t, st: st, recv: make(chan *envoy_service_discovery_v3.DiscoveryResponse, 16)}
	go func() {
		defer close(c.recv)
		for {
			resp, err := st.Recv()
			if err != nil {
				return
			}
			c.recv <- resp
		}
	}()
	c.send(&envoy_service_discovery_v3.DiscoveryRequest{Node: kubeEnvoyNode, TypeUrl: resource.ClusterType})
	return c
}

func (c *clusterClient) send(req *envoy_service_discovery_v3.DiscoveryRequest) {
	c.t.Helper()
	if err := c.st.Send(req); err != nil {
		c.t.Fatal(err)
	}
}

// answer waits for the next response and ACKs it, or NACKs it with
// detail; it returns when the answer was sent.
func (c *clusterClient) answer(detail string) time.Time {
	c.t.Helper()
	var resp *envoy_service_discovery_v3.DiscoveryResponse
	select {
	case resp = <-c.recv:
	case <-time.After(30 * time.Second):
		c.t.Fatal("no clusters came")
	}
	if resp == nil {
		c.t.Fatal("the stream closed")
	}
	req := &envoy_service_discovery_v3.DiscoveryRequest{Node: kubeEnvoyNode, TypeUrl: resource.ClusterType, ResponseNonce: resp.GetNonce(), VersionInfo: resp.GetVersionInfo()}
	if detail != "" {
		req.ErrorDetail = &status.Status{Code: 3, Message: detail}
	}
	c.send(req)
	return time.Now()
}

// waitProgrammed waits until the proxy's Programmed condition on the API
// server has the status and reason, and returns it.
func (k *kubeObjects) waitProgrammed(name string, st metav1.ConditionStatus, reason string) switchyardv1.DetailedCondition {
	k.t.Helper()
	var got switchyardv1.DetailedCondition
	testenv.WaitFor(k.t, 30*time.Second, "HTTPProxy "+name+" Programmed "+reason, func() bool {
		for _, c := range k.getProxy(name).Status.Conditions {
			if c.Type == switchyardv1.ConditionProgrammed {
				got = c
				return c.Status == st && c.Reason == reason
			}
		}
		return false
	})
	return got
}

// TestKubeProgrammed: on Kubernetes, what an Envoy does with a proxy's
// configuration reaches the proxy's status on the API server: Unknown
// with nobody connected, True once it ACKs, False with its error_detail
// once it NACKs.
func TestKubeProgrammed(t *testing.T) {
	k, _, rc := appFixture(t, "programmed", "10.0.0.1")
	r := startReplica(t, rc, testLease(k.ns, "programmed-"+k.ns))
	k.waitStatus("app", "valid")
	k.waitProgrammed("app", metav1.ConditionUnknown, "NoNodes")

	envoy := newClusterClient(t, r.c.server.XDSAddr().String())
	envoy.answer("")
	k.waitProgrammed("app", metav1.ConditionTrue, "Programmed")

	// Another Service is another cluster, which the client rejects.
	k.service("web2", "10.0.0.2")
	p := k.getProxy("app")
	p.Spec.Routes[0].Services[0].Name = "web2"
	k.updateProxy(p)
	nacked := envoy.answer("e2e: cluster rejected on command")
	c := k.waitProgrammed("app", metav1.ConditionFalse, "Rejected")
	t.Logf("the NACK reached the API server %v after it was sent", time.Since(nacked).Round(time.Millisecond))
	if !strings.Contains(c.Message, `"envoy-kube"`) || !strings.Contains(c.Message, "e2e: cluster rejected on command") || c.ObservedGeneration != p.Generation {
		t.Fatalf("the condition must name the node and its error: %+v", c)
	}
}
