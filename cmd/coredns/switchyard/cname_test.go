package switchyard

import (
	"testing"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/miekg/dns"

	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/xdstest"
)

// TestCNAME answers the name of a DNS-resolved cluster (an ExternalName
// Service) with a CNAME to its host, without waiting for endpoints, and
// leaves it out of the EDS subscription.
func TestCNAME(t *testing.T) {
	s := newFed(t, testConfig(),
		[]*envoy_config_cluster_v3.Cluster{edsCluster("web.shop"), xdstest.ExternalNameCluster("hosted.shop", "API.Vendor.example.net.", 443)},
		cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.1", healthy, 0))),
	)
	if got := s.client.state.subscribed; len(got) != 1 || got[0] != "web.shop" {
		t.Errorf("EDS subscription %v, want [web.shop] only", got)
	}
	for _, qtype := range []uint16{dns.TypeA, dns.TypeSRV, dns.TypeTXT} {
		r := query(t, s, "hosted.shop."+testConfig().Zones[0], qtype)
		if len(r.Answer) != 1 || r.Rcode != dns.RcodeSuccess {
			t.Fatalf("%s: %v", dns.TypeToString[qtype], r)
		}
		if c, ok := r.Answer[0].(*dns.CNAME); !ok || c.Target != "api.vendor.example.net." {
			t.Errorf("%s: %v, want a CNAME to api.vendor.example.net.", dns.TypeToString[qtype], r.Answer[0])
		}
	}
	if _, ok := s.Pick("hosted.shop", false); ok {
		t.Error("Pick returned an endpoint of a CNAME")
	}
}

// TestCNAMEClusterRejected refuses the DNS-resolved clusters a CNAME cannot
// answer: several hosts, or an address.
func TestCNAMEClusterRejected(t *testing.T) {
	for name, mutate := range map[string]func(*envoy_config_cluster_v3.Cluster){
		"two hosts": func(c *envoy_config_cluster_v3.Cluster) {
			l := c.LoadAssignment.Endpoints[0]
			l.LbEndpoints = append(l.LbEndpoints, l.LbEndpoints[0])
		},
		"no endpoint": func(c *envoy_config_cluster_v3.Cluster) {
			c.LoadAssignment.Endpoints = []*envoy_config_endpoint_v3.LocalityLbEndpoints{}
		},
		"an address": func(c *envoy_config_cluster_v3.Cluster) {
			c.LoadAssignment.Endpoints[0].LbEndpoints[0].GetEndpoint().GetAddress().GetSocketAddress().Address = "10.0.0.1"
		},
	} {
		c := xdstest.ExternalNameCluster("hosted.shop", "api.vendor.example.net", 443)
		mutate(c)
		if _, err := decodeCluster(c, "v1"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
