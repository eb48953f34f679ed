package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestBrowserLiveEndpoints opens a cluster's page, adds an endpoint to
// one of its EndpointSlices, and sees it appear without a reload.
func TestBrowserLiveEndpoints(t *testing.T) {
	ctx := browser(t)
	dir, base, _ := quickstart(t)

	var h struct {
		Routes []struct {
			Name     string
			Clusters []struct{ Name string }
		}
	}
	getJSON(t, base+"/api/host?name=shop.example.com", &h)
	cluster := ""
	for _, r := range h.Routes {
		if r.Name == "web" && len(r.Clusters) == 1 {
			cluster = r.Clusters[0].Name
		}
	}
	if cluster == "" {
		t.Fatalf("the web route has no single cluster: %+v", h)
	}
	open(t, ctx, base, "cluster/"+cluster)
	visible(t, ctx, `#endpoints tr[data-endpoint="10.1.1.10:8080"]`)
	// A reload would lose this mark.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}

	edit(t, dir, "20-services.yaml", "- addresses: [10.1.1.11]\n", "- addresses: [10.1.1.11]\n  zone: us-east-1a\n  conditions: {ready: true}\n- addresses: [10.1.1.12]\n")
	visible(t, ctx, `#endpoints tr[data-endpoint="10.1.1.12:8080"]`)
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`))
	if err != nil {
		t.Fatal(err)
	}
	if !kept {
		t.Error("the page reloaded to show the new endpoint; it should have updated in place")
	}
	if s := text(t, ctx, "#live"); !strings.Contains(s, "7 of 7 endpoints healthy") {
		t.Errorf("the cluster page says %q, want 7 of 7 endpoints healthy", s)
	}
	screenshot(t, ctx, "console-cluster")
}

// TestBrowserClients connects an xDS client, acknowledges the clusters it
// is sent and rejects the load assignments, and finds both on the
// clients page.
func TestBrowserClients(t *testing.T) {
	ctx := browser(t)
	_, base, xds := quickstart(t)

	cc, err := grpc.NewClient(xds, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(sctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &envoy_config_core_v3.Node{Id: "console-test-envoy", Cluster: "edge", UserAgentName: "envoy"}
	cds := exchange(t, st, &envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.ClusterType})
	var names []string
	for _, a := range cds.GetResources() {
		var c envoy_config_cluster_v3.Cluster
		if err := a.UnmarshalTo(&c); err != nil {
			t.Fatal(err)
		}
		names = append(names, c.GetName())
	}
	eds := exchange(t, st, &envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.EndpointType, ResourceNames: names})
	// ACK the clusters and NACK the load assignments: the two answers of
	// a data plane the page must tell apart.
	send(t, st, &envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.ClusterType, VersionInfo: cds.GetVersionInfo(), ResponseNonce: cds.GetNonce()})
	send(t, st, &envoy_service_discovery_v3.DiscoveryRequest{Node: node, TypeUrl: resource.EndpointType, ResourceNames: names, ResponseNonce: eds.GetNonce(),
		ErrorDetail: &status.Status{Message: "console test: endpoints rejected"}})
	waitFor(t, time.Minute, "the ACK and the NACK to be recorded", func() bool {
		var groups []struct {
			Group   string
			Clients []struct {
				Node  string
				Types []struct{ Type, Acked, Rejected string }
			}
		}
		getJSON(t, base+"/api/clients", &groups)
		acked, rejected := false, false
		for _, g := range groups {
			for _, c := range g.Clients {
				for _, ty := range c.Types {
					if g.Group != "envoy" || c.Node != node.Id {
						continue
					}
					acked = acked || ty.Type == xdsres.ShortType(resource.ClusterType) && ty.Acked == cds.GetVersionInfo()
					rejected = rejected || ty.Type == xdsres.ShortType(resource.EndpointType) && ty.Rejected == eds.GetVersionInfo()
				}
			}
		}
		return acked && rejected
	})

	open(t, ctx, base, "clients")
	if s := text(t, ctx, `table.clients[data-group="envoy"]`); !strings.Contains(s, "console-test-envoy") || !strings.Contains(s, cds.GetVersionInfo()) {
		t.Errorf("the clients page shows %q, want node console-test-envoy with the acknowledged version %s", s, cds.GetVersionInfo())
	}
	if s := text(t, ctx, `table.clients[data-group="envoy"] tr.broken`); !strings.Contains(s, "console test: endpoints rejected") {
		t.Errorf("the rejected type's row says %q, want the NACK's error", s)
	}
	screenshot(t, ctx, "console-clients")
}

func send(t *testing.T, st envoy_service_discovery_v3.AggregatedDiscoveryService_StreamAggregatedResourcesClient, req *envoy_service_discovery_v3.DiscoveryRequest) {
	t.Helper()
	if err := st.Send(req); err != nil {
		t.Fatal(err)
	}
}

// exchange sends a request and returns the response.
func exchange(t *testing.T, st envoy_service_discovery_v3.AggregatedDiscoveryService_StreamAggregatedResourcesClient, req *envoy_service_discovery_v3.DiscoveryRequest) *envoy_service_discovery_v3.DiscoveryResponse {
	t.Helper()
	send(t, st, req)
	resp, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
