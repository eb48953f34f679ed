package switchyard

import (
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/xdstest"
)

// The ADS client against Switchyard's own xDS server: every test runs a
// real gRPC server on a loopback port and waits for effects by polling.

const wait = 5 * time.Second

func counts(s *Switchyard) string {
	c := s.client
	return fmt.Sprintf("acks cds=%d eds=%d, nacks cds=%d eds=%d", c.stats[cds].acks.Load(), c.stats[eds].acks.Load(), c.stats[cds].nacks.Load(), c.stats[eds].nacks.Load())
}

// responses is how many responses of the type the plugin applied or
// rejected.
func responses(s *Switchyard, t xdsType) int64 {
	st := &s.client.stats[t]
	return st.acks.Load() + st.nacks.Load()
}

func TestClientFollowsControlPlane(t *testing.T) {
	cp := xdstest.Start(t, "127.0.0.1:0", nil)
	cp.Set(t, []*envoy_config_cluster_v3.Cluster{edsCluster("web.shop"), edsCluster("api.shop")},
		cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.1", healthy, 0), ep("10.0.0.2", healthy, 0))),
		cla("api.shop", loc("a", "shop/api", 0, 1, ep("10.0.1.1", healthy, 0))),
	)
	s := startPlugin(t, nil, cp.Addr())

	xdstest.Eventually(t, wait, "ready", func() (bool, string) { return s.Ready(), counts(s) })
	if got := entryAddrs(s, "web.shop"); got != "10.0.0.1/healthy,10.0.0.2/healthy" {
		t.Fatalf("web.shop = %s", got)
	}
	// One CDS and one EDS response, both ACKed.
	xdstest.Eventually(t, wait, "initial ACKs", func() (bool, string) {
		return counts(s) == "acks cds=1 eds=1, nacks cds=0 eds=0", counts(s)
	})

	t.Run("cluster added after connect", func(t *testing.T) {
		cp.Set(t, []*envoy_config_cluster_v3.Cluster{edsCluster("new.shop")}, cla("new.shop", loc("a", "shop/new", 0, 1, ep("10.0.2.1", healthy, 0))))
		d := xdstest.Eventually(t, wait, "new cluster answered", hasEntry(s, "new.shop", "10.0.2.1/healthy"))
		t.Logf("cluster added: answered after %s", d)
		if ap, ok := s.Pick("new.shop", false); !ok || ap.String() != "10.0.2.1:8080" {
			t.Errorf("Pick(new.shop) = %v %v", ap, ok)
		}
	})

	t.Run("endpoint-only update", func(t *testing.T) {
		cdsBefore := responses(s, cds)
		cp.Set(t, nil, cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.1", healthy, 0), ep("10.0.0.2", draining, 0), ep("10.0.0.3", healthy, 0))))
		d := xdstest.Eventually(t, wait, "endpoint update applied", hasEntry(s, "web.shop", "10.0.0.1/healthy,10.0.0.2/draining,10.0.0.3/healthy"))
		t.Logf("endpoint-only update: applied after %s", d)
		if n := responses(s, cds); n != cdsBefore {
			t.Errorf("an endpoint-only update sent %d CDS responses", n-cdsBefore)
		}
		for range 1000 {
			if ap, _ := s.Pick("web.shop", false); ap.Addr().String() == "10.0.0.2" {
				t.Fatal("draining endpoint picked")
			}
		}
	})

	t.Run("bad assignment is NACKed and the last good one kept", func(t *testing.T) {
		nacksBefore, serverBefore := s.client.stats[eds].nacks.Load(), cp.NACKs(typeEndpoint)
		cp.Set(t, nil,
			cla("web.shop", loc("a", "shop/web", 0, 1, ep("web-0.shop.svc", healthy, 0))),
			cla("api.shop", loc("a", "shop/api", 0, 1, ep("10.0.1.2", healthy, 0))),
		)
		xdstest.Eventually(t, wait, "server counted the NACK", func() (bool, string) {
			return cp.NACKs(typeEndpoint) == serverBefore+1, counts(s)
		})
		if n := s.client.stats[eds].nacks.Load(); n != nacksBefore+1 {
			t.Errorf("client NACKs %d, want %d", n, nacksBefore+1)
		}
		// The good assignment of the same response was applied ...
		xdstest.Eventually(t, wait, "good assignment applied", hasEntry(s, "api.shop", "10.0.1.2/healthy"))
		// ... and the bad one left the last good data in place.
		if got := entryAddrs(s, "web.shop"); got != "10.0.0.1/healthy,10.0.0.2/draining,10.0.0.3/healthy" {
			t.Errorf("web.shop after NACK = %s", got)
		}
		// The next good version is accepted again.
		cp.Set(t, nil, cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.4", healthy, 0))))
		xdstest.Eventually(t, wait, "recovered", hasEntry(s, "web.shop", "10.0.0.4/healthy"))
	})

	t.Run("cluster that is not EDS is NACKed", func(t *testing.T) {
		before := cp.NACKs(typeCluster)
		cp.Set(t, []*envoy_config_cluster_v3.Cluster{staticCluster("static.shop")})
		xdstest.Eventually(t, wait, "server counted the NACK", func() (bool, string) {
			return cp.NACKs(typeCluster) == before+1, counts(s)
		})
		if got := entryAddrs(s, "web.shop"); got != "10.0.0.4/healthy" {
			t.Errorf("web.shop after a CDS NACK = %s", got)
		}
		cp.Remove(t, "static.shop")
	})

	t.Run("cluster removed", func(t *testing.T) {
		cp.Remove(t, "new.shop")
		xdstest.Eventually(t, wait, "removed", hasEntry(s, "new.shop", "<absent>"))
	})
}

func TestClientReconnects(t *testing.T) {
	cp := xdstest.Start(t, "127.0.0.1:0", nil)
	cp.Set(t, []*envoy_config_cluster_v3.Cluster{edsCluster("web.shop")},
		cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.1", healthy, 0))))
	s := startPlugin(t, nil, cp.Addr())
	xdstest.Eventually(t, wait, "ready", func() (bool, string) { return s.Ready(), counts(s) })

	cp.Stop()
	xdstest.Eventually(t, wait, "disconnect noticed", func() (bool, string) { return !s.client.connected.Load(), "connected" })
	// Answers continue from the last good data while disconnected.
	for range 100 {
		if ap, ok := s.Pick("web.shop", false); !ok || ap.Addr().String() != "10.0.0.1" {
			t.Fatalf("while disconnected: Pick = %v %v", ap, ok)
		}
	}
	if !s.Ready() {
		t.Error("not ready while disconnected, though answering")
	}
	// A change made while the plugin is away arrives after the restart.
	cp.Set(t, nil, cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.2", healthy, 0))))
	streams := s.client.streams.Load()
	start := time.Now()
	cp.Restart(t)
	xdstest.Eventually(t, wait, "reconnected and updated", hasEntry(s, "web.shop", "10.0.0.2/healthy"))
	t.Logf("control plane restarted: reconnected and updated after %s (%d new streams)", time.Since(start), s.client.streams.Load()-streams)
	// And it follows changes made after the restart.
	cp.Set(t, []*envoy_config_cluster_v3.Cluster{edsCluster("new.shop")}, cla("new.shop", loc("a", "shop/new", 0, 1, ep("10.0.2.1", healthy, 0))))
	xdstest.Eventually(t, wait, "new cluster after restart", hasEntry(s, "new.shop", "10.0.2.1/healthy"))
}

func TestClientRestartWithSameContentResendsNothing(t *testing.T) {
	// Versions come from content: a restarted control plane serving the
	// same content has nothing to send, and the plugin keeps its data.
	cp := xdstest.Start(t, "127.0.0.1:0", nil)
	cp.Set(t, []*envoy_config_cluster_v3.Cluster{edsCluster("web.shop")},
		cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.1", healthy, 0))))
	s := startPlugin(t, nil, cp.Addr())
	xdstest.Eventually(t, wait, "ready", func() (bool, string) { return s.Ready(), counts(s) })
	before := responses(s, cds) + responses(s, eds)
	streams := s.client.streams.Load()
	cp.Stop()
	cp.Restart(t)
	xdstest.Eventually(t, wait, "new stream", func() (bool, string) {
		return s.client.streams.Load() > streams && s.client.connected.Load(), "no new stream"
	})
	// A change after the restart proves the stream works, and it is the
	// only thing received.
	cp.Set(t, nil, cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.2", healthy, 0))))
	xdstest.Eventually(t, wait, "update", hasEntry(s, "web.shop", "10.0.0.2/healthy"))
	if got := responses(s, cds) + responses(s, eds) - before; got != 1 {
		t.Errorf("received %d responses after the restart, want 1 (the change)", got)
	}
}

func TestClientFailsOverToNextControlPlane(t *testing.T) {
	// The first address refuses connections.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := lis.Addr().String()
	lis.Close()
	cp := xdstest.Start(t, "127.0.0.1:0", nil)
	cp.Set(t, []*envoy_config_cluster_v3.Cluster{edsCluster("web.shop")},
		cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.1", healthy, 0))))
	s := startPlugin(t, nil, dead, cp.Addr())
	xdstest.Eventually(t, wait, "ready through the second control plane", func() (bool, string) { return s.Ready(), counts(s) })
}

func TestClientMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	ca, cert, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pki.write(t, ca, cert, key)
	cp := xdstest.Start(t, "127.0.0.1:0", pki.serverTLS())
	cp.Set(t, []*envoy_config_cluster_v3.Cluster{edsCluster("web.shop")},
		cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.1", healthy, 0))))
	s := startPlugin(t, func(c *Config) {
		c.TLS = &TLSConfig{CertFile: cert, KeyFile: key, CAFile: ca, ServerName: "xds.test"}
	}, cp.Addr())
	xdstest.Eventually(t, wait, "ready over mTLS", func() (bool, string) { return s.Ready(), counts(s) })
}

func TestClientInitialFetchTimeout(t *testing.T) {
	// A cluster whose endpoints never come: ready after the timeout,
	// the other clusters answered meanwhile.
	cp := xdstest.Start(t, "127.0.0.1:0", nil)
	cp.Set(t, []*envoy_config_cluster_v3.Cluster{edsCluster("web.shop"), edsCluster("lost.shop")},
		cla("web.shop", loc("a", "shop/web", 0, 1, ep("10.0.0.1", healthy, 0))))
	s := startPlugin(t, func(c *Config) { c.InitialFetchTimeout = 300 * time.Millisecond }, cp.Addr())
	xdstest.Eventually(t, wait, "web.shop answered", hasEntry(s, "web.shop", "10.0.0.1/healthy"))
	if s.Ready() {
		t.Error("ready while lost.shop is warming and the timeout has not passed")
	}
	xdstest.Eventually(t, wait, "ready after the initial fetch timeout", func() (bool, string) { return s.Ready(), "not ready" })
	if got := entryAddrs(s, "lost.shop"); got != "<absent>" {
		t.Errorf("lost.shop = %s", got)
	}
}

// startPlugin connects a plugin to control planes with a fast backoff.
func startPlugin(t testing.TB, mutate func(*Config), addrs ...string) *Switchyard {
	t.Helper()
	cfg := DefaultConfig([]string{"lb.example.org."}, addrs...)
	cfg.ReconnectBase, cfg.ReconnectMax = 20*time.Millisecond, 200*time.Millisecond
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// entryAddrs lists a name's endpoints with their health, or "<absent>".
func entryAddrs(s *Switchyard, name string) string {
	tb := s.table.Load()
	if tb == nil {
		return "<no table>"
	}
	e := tb.entries[name]
	if e == nil {
		return "<absent>"
	}
	out := ""
	for i, ep := range e.assign.endpoints {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf("%s/%s", ep.addr, ep.health)
	}
	return out
}

func hasEntry(s *Switchyard, name, want string) func() (bool, string) {
	return func() (bool, string) {
		got := entryAddrs(s, name)
		return got == want, fmt.Sprintf("%s = %s", name, got)
	}
}
