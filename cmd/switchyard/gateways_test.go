package main

import (
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
)

const gatewaysExample = "../../examples/etcd/gateways"

// TestGatewaysExampleRenders: each load balancer of examples/etcd/gateways
// renders valid, with its own hosts and none of the other's.
func TestGatewaysExampleRenders(t *testing.T) {
	hosts := map[string][]string{
		"edge-a": {"postgres.example.com", "redis.example.com"},
		"edge-b": {"mqtt.example.com", "amqp.example.com"},
	}
	for gw, own := range hosts {
		out, errOut, code := run(t, "render", "--source", gatewaysExample, "--ingress-class-name", gw)
		if code != 0 {
			t.Fatalf("render %s: exit %d\n%s", gw, code, errOut)
		}
		for other, theirs := range hosts {
			for _, h := range theirs {
				if got := strings.Contains(out, h); got != (other == gw) {
					t.Errorf("render %s: mentions %s: %v", gw, h, got)
				}
			}
		}
		if n := strings.Count(out, "currentStatus: valid"); n != len(own) {
			t.Errorf("render %s: %d valid proxies, want %d", gw, n, len(own))
		}
	}
}

// TestGatewaysExampleApplies loads examples/etcd/gateways into a real etcd
// as its README says: one transaction per file.
func TestGatewaysExampleApplies(t *testing.T) {
	e := etcdtest.Start(t)
	out, errOut, code := run(t, "etcd", "apply", "--etcd-endpoints="+e.Endpoint, "-f", gatewaysExample)
	if code != 0 || strings.Count(out, "objects written at revision") != 4 {
		t.Fatalf("etcd apply: exit %d\n%s%s", code, out, errOut)
	}
}
