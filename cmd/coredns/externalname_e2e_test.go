package main

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/xdstest"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// externalNameProxy routes web.shop to the Service storefront.
const externalNameProxy = `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: web, namespace: shop}
spec:
  virtualhost: {fqdn: shop.example.com}
  routes:
  - services: [{name: storefront, port: 80}]
`

// TestExternalNameCNAME answers the DNS name of a route to an ExternalName
// Service through real CoreDNS with `switchyard serve
// --enable-external-name-services`: a CNAME to spec.externalName, for every
// query type. When the Service becomes one with endpoints, the name is
// answered with their addresses instead.
func TestExternalNameCNAME(t *testing.T) {
	s := &serveControlPlane{opts: translator.DefaultOptions(), dir: t.TempDir(), externalNames: true}
	s.start(t, "127.0.0.1:0")
	t.Cleanup(func() { s.stop(t) })
	s.change(t, func() {
		writeFile(t, s.dir, "proxy.yaml", externalNameProxy)
		writeFile(t, s.dir, "service.yaml", `apiVersion: v1
kind: Service
metadata: {name: storefront, namespace: shop}
spec:
  type: ExternalName
  externalName: storefront.vendor.example.net
  ports: [{port: 80}]
`)
	})
	d := startCoreDNS(t, corefile, s)
	c := d.client(t)
	name := "web.shop." + zone
	xdstest.Eventually(t, 30*time.Second, name+" answered with a CNAME", func() (bool, string) {
		r := c.query(t, name, dns.TypeA)
		return cnameOf(r) == "storefront.vendor.example.net.", r.String()
	})
	for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeSRV, dns.TypeTXT} {
		r := c.query(t, name, qtype)
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 || cnameOf(r) != "storefront.vendor.example.net." || !r.Authoritative {
			t.Errorf("%s %s: want only a CNAME to storefront.vendor.example.net., got %v", name, dns.TypeToString[qtype], r)
		}
	}

	s.change(t, func() {
		writeFile(t, s.dir, "service.yaml", `apiVersion: v1
kind: Service
metadata: {name: storefront, namespace: shop}
spec:
  ports: [{port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: storefront-1
  namespace: shop
  labels: {kubernetes.io/service-name: storefront}
addressType: IPv4
ports: [{port: 80}]
endpoints:
- addresses: ["10.1.0.1"]
  conditions: {ready: true}
`)
	})
	xdstest.Eventually(t, 30*time.Second, name+" answered with the Service's endpoint", func() (bool, string) {
		got := c.a(t, name)
		return strings.Join(got, ",") == "10.1.0.1", strings.Join(got, ",")
	})
}

// cnameOf is the target of the first CNAME of an answer, "" for none.
func cnameOf(r *dns.Msg) string {
	for _, rr := range r.Answer {
		if c, ok := rr.(*dns.CNAME); ok {
			return c.Target
		}
	}
	return ""
}
