package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

// TestKubeLeaderElection runs two replicas: both serve xDS, only the
// leader writes status, and when the leader stops it releases the Lease,
// so that the other takes over without waiting for it to expire, and
// writes what changed since.
func TestKubeLeaderElection(t *testing.T) {
	k, host, rc := appFixture(t, "ha", "10.0.2.1")
	opts := testLease(k.ns, "ha-"+k.ns)
	a, b := startReplica(t, rc, opts), startReplica(t, rc, opts)

	var leader, follower *replica
	testenv.WaitFor(t, 10*time.Second, "a leader", func() bool {
		la, lb := a.c.status.Leading(), b.c.status.Leading()
		switch {
		case la && !lb:
			leader, follower = a, b
		case lb && !la:
			leader, follower = b, a
		}
		return la != lb
	})
	k.waitStatus("app", switchyardv1.StatusValid)
	for _, r := range []*replica{a, b} {
		testenv.WaitFor(t, 10*time.Second, "both replicas to serve the route", func() bool {
			return len(endpointsOf(envoyResources(r), host)) == 1
		})
	}
	if w := follower.metric(t, `switchyard_status_updates_total{result="written"}`); w != "" && w != "0" {
		t.Fatalf("the follower wrote %s statuses", w)
	}
	if w := leader.metric(t, `switchyard_status_updates_total{result="written"}`); w == "" || w == "0" {
		t.Fatal("the leader wrote nothing")
	}
	if g := follower.metric(t, "switchyard_status_leader "); g != "0" {
		t.Fatalf("follower's switchyard_status_leader = %q", g)
	}

	// Stop the leader as SIGTERM does: it releases the Lease. The release
	// is what makes the takeover quick; how quick is logged, not asserted.
	held := leaseHolder(t, rc, opts)
	start := time.Now()
	leader.stop(t)
	if h := leaseHolder(t, rc, opts); h == held {
		t.Errorf("the stopped leader still holds the Lease (%q)", h)
	}
	testenv.WaitFor(t, opts.leaseDuration+30*time.Second, "the follower to take over", follower.c.status.Leading)
	t.Logf("failover after a graceful stop: %v (lease duration %v)", time.Since(start).Round(time.Millisecond), opts.leaseDuration)
	if len(endpointsOf(envoyResources(follower), host)) != 1 {
		t.Fatal("the new leader stopped serving the route")
	}

	// The new leader writes the next change.
	p := k.getProxy("app")
	p.Spec.Routes[0].Services[0].Name = "gone"
	k.updateProxy(p)
	broken := k.waitStatus("app", switchyardv1.StatusInvalid)
	if !strings.Contains(broken.Status.Description, "gone") {
		t.Fatalf("description %q", broken.Status.Description)
	}
	if w := follower.metric(t, `switchyard_status_updates_total{result="written"}`); w == "" || w == "0" {
		t.Fatal("the new leader wrote nothing")
	}
}

// TestKubeLeaderCrash cuts the leader off the API server without letting
// it release the Lease, as a crash or a partition would: it stops writing
// at its renew deadline, and the other replica takes over once the Lease
// expires, never while the old leader still writes.
func TestKubeLeaderCrash(t *testing.T) {
	k, host, rc := appFixture(t, "crash", "10.0.5.1")
	opts := testLease(k.ns, "crash-"+k.ns)
	u, err := url.Parse(rc.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	viaProxy := rest.CopyConfig(rc)
	viaProxy.Host = "https://" + proxy.addr()
	leader := startReplica(t, viaProxy, opts)
	testenv.WaitFor(t, 10*time.Second, "the first replica to lead", leader.c.status.Leading)
	follower := startReplica(t, rc, opts)
	k.waitStatus("app", switchyardv1.StatusValid)

	proxy.cut()
	cut := time.Now()
	var overlap bool
	testenv.WaitFor(t, opts.leaseDuration+30*time.Second, "the follower to take over", func() bool {
		if follower.c.status.Leading() {
			overlap = overlap || leader.c.status.Leading()
			return true
		}
		return false
	})
	took := time.Since(cut)
	t.Logf("failover after the leader was cut off: %v (lease duration %v, renew deadline %v, retry period %v)",
		took.Round(time.Millisecond), opts.leaseDuration, opts.renewDeadline, opts.retryPeriod)
	if overlap {
		t.Error("both replicas led at once")
	}
	// The cut-off replica still serves its last configuration.
	if len(endpointsOf(envoyResources(leader), host)) != 1 {
		t.Error("the cut-off replica stopped serving")
	}
}

// TestKubeAPIServerRestart stops the API server (etcd stays up): the
// controller keeps serving its last configuration, and once the API
// server is back it sees changes and writes status again.
func TestKubeAPIServerRestart(t *testing.T) {
	k, host, rc := appFixture(t, "before", "10.0.3.1")
	env := k.env
	r := startReplica(t, rc, testLease(k.ns, "restart-"+k.ns))
	k.waitStatus("app", switchyardv1.StatusValid)
	served := envoyResources(r)

	stopping := time.Now()
	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	t.Logf("kube-apiserver stopped in %v", stopped.Sub(stopping).Round(time.Millisecond))
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = env.StartAPIServer()
		}
	})
	// The leader gives its Lease up after the renew deadline; xDS is
	// served unchanged all along.
	testenv.WaitFor(t, 10*time.Second, "the leader to give up its Lease", func() bool { return !r.c.status.Leading() })
	if d := diffResources(envoyResources(r), served); d != "" {
		t.Fatalf("the served configuration changed without the API server:\n%s", d)
	}
	if r.c.server.XDSAddr() == nil {
		t.Fatal("xDS stopped")
	}
	starting := time.Now()
	if err := env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	back := time.Now()
	t.Logf("kube-apiserver down for %v, serving the last configuration; restarted in %v", back.Sub(stopped).Round(time.Millisecond), back.Sub(starting).Round(time.Millisecond))
	after := "after." + k.ns + ".example.com"
	k.proxy("after", after, "web", "")
	testenv.WaitFor(t, 60*time.Second, "the new proxy to be served", func() bool {
		return len(endpointsOf(envoyResources(r), after)) == 1
	})
	t.Logf("a change made after the restart served %v later", time.Since(back).Round(time.Millisecond))
	k.waitStatus("after", switchyardv1.StatusValid)
	t.Logf("and its status written %v later", time.Since(back).Round(time.Millisecond))
	if len(endpointsOf(envoyResources(r), host)) != 1 {
		t.Fatal("the proxy from before the restart is no longer served")
	}
}

// TestServeKubeconfig runs `switchyard serve --kubeconfig` as a user
// would, and reads the result from its admin endpoint.
func TestServeKubeconfig(t *testing.T) {
	k, host, rc := appFixture(t, "cli", "10.0.4.1")
	kc, err := testenv.Kubeconfig(rc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	admin := "127.0.0.1:" + freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	root := newRootCommand()
	root.SetArgs([]string{"serve", "--kubeconfig", kc, "--xds-address", "127.0.0.1:0", "--admin-address", admin,
		"--watch-namespaces", k.ns, "--leader-election-namespace", deployNamespace, "--leader-election-name", "cli-" + k.ns,
		"--log-level", "warn"})
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	testenv.WaitFor(t, 30*time.Second, "/readyz", func() bool { return httpGet(t, "http://"+admin+"/readyz") == "ok\n" })
	if out := httpGet(t, "http://"+admin+"/debug/xds?group=envoy"); !strings.Contains(out, host) {
		t.Fatalf("/debug/xds does not serve %s:\n%.2000s", host, out)
	}
	k.waitStatus("app", switchyardv1.StatusValid)
	if g := httpGet(t, "http://"+admin+"/metrics"); !strings.Contains(g, "switchyard_status_leader 1") {
		t.Error("the only replica is not the leader")
	}
}

// leaseHolder reads the holder of the replicas' Lease, "" when none.
func leaseHolder(t *testing.T, rc *rest.Config, opts kubeOptions) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoordinationV1().Leases(opts.leaseNamespace).Get(context.Background(), opts.leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
