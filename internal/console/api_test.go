package console_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/examples"
)

// TestAPIPagingAndFilters checks the server-side paging and filtering the
// pages rely on, on the quickstart, without a browser.
func TestAPIPagingAndFilters(t *testing.T) {
	dir := t.TempDir()
	if err := examples.WriteQuickstart(dir); err != nil {
		t.Fatal(err)
	}
	base, _ := serveDir(t, dir)

	type list struct {
		Total, Offset, Limit int
		Items                []struct{ Kind, Namespace, Name, State string }
		Namespaces           []string
	}
	var all, page, ns list
	getJSON(t, base+"/api/objects", &all)
	if all.Total != 2 || len(all.Items) != 2 || len(all.Namespaces) != 2 {
		t.Fatalf("/api/objects = %+v, want the quickstart's two HTTPProxies in two namespaces", all)
	}
	getJSON(t, base+"/api/objects?limit=1&offset=1", &page)
	if page.Total != 2 || len(page.Items) != 1 || page.Items[0] != all.Items[1] {
		t.Errorf("the second page of one = %+v, want %+v of 2", page, all.Items[1])
	}
	getJSON(t, base+"/api/objects?namespace=shop&kind=HTTPProxy&state=valid", &ns)
	if ns.Total != 1 || ns.Items[0].Name != "storefront" {
		t.Errorf("namespace shop = %+v, want storefront alone", ns)
	}
	getJSON(t, base+"/api/objects?limit=100000", &page)
	if page.Limit != 500 {
		t.Errorf("limit=100000 gave a page of %d, want it capped at 500", page.Limit)
	}
	getJSON(t, base+"/api/objects?state=invalid", &page)
	if page.Total != 0 || page.Items == nil {
		t.Errorf("no invalid objects = %+v, want an empty list, not null", page)
	}
	var hosts list
	getJSON(t, base+"/api/hosts?broken=true", &hosts)
	if hosts.Total != 0 {
		t.Errorf("the quickstart has broken hosts: %+v", hosts)
	}
	for _, u := range []string{"/api/host?name=nope", "/api/graph?host=nope", "/api/cluster?name=nope"} {
		r, err := http.Get(base + u)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Body.Close()
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("%s = %d, want 404", u, r.StatusCode)
		}
	}
}

// TestClientsDelta checks that an incremental (delta) stream's ACK is
// recorded against the type version its response carried.
func TestClientsDelta(t *testing.T) {
	dir := t.TempDir()
	if err := examples.WriteQuickstart(dir); err != nil {
		t.Fatal(err)
	}
	base, xds := serveDir(t, dir)
	cc, err := grpc.NewClient(xds, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &envoy_config_core_v3.Node{Id: "console-delta", UserAgentName: "envoy"}
	if err := st.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{Node: node, TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	resp, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&envoy_service_discovery_v3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: resp.GetNonce()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the delta ACK to be recorded", func() bool {
		var groups []struct {
			Group   string
			Clients []struct {
				Node   string
				Method string
				Types  []struct{ Type, Sent, Acked string }
			}
		}
		getJSON(t, base+"/api/clients", &groups)
		for _, g := range groups {
			for _, c := range g.Clients {
				for _, ty := range c.Types {
					if g.Group == "envoy" && c.Node == node.Id && c.Method == "DeltaAggregatedResources" && ty.Acked == resp.GetSystemVersionInfo() && ty.Sent == ty.Acked {
						return true
					}
				}
			}
		}
		return false
	})
}
