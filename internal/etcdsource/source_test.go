package etcdsource_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/etcdsource"
	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

const prefix = "/switchyard/"

func serviceKey(ns, name string) string { return prefix + "service/" + ns + "/" + name }

func serviceJSON(ns, name string, port int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q,"namespace":%q},"spec":{"ports":[{"port":%d}]}}`, name, ns, port)
}

func put(t *testing.T, c *clientv3.Client, key, value string) int64 {
	t.Helper()
	resp, err := c.Put(context.Background(), key, value)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// follower runs a Source and keeps the state its changes add up to.
type follower struct {
	src *etcdsource.Source
	mu  sync.Mutex
	now map[objects.Key]int32 // Service -> its first port
	// batches counts the batches emitted after the initial list.
	batches int
}

func (f *follower) apply(cs []objects.Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches++
	for _, c := range cs {
		if c.Object == nil {
			delete(f.now, c.Key)
			continue
		}
		f.now[c.Key] = portOf(c.Object)
	}
}

func (f *follower) port(ns, name string) (int32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.now[objects.Key{Kind: objects.KindService, Namespace: ns, Name: name}]
	return p, ok
}

func (f *follower) size() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.now)
}

// start lists; run follows the watch until the test ends.
func start(t *testing.T, c *clientv3.Client) *follower {
	t.Helper()
	f := &follower{src: etcdsource.New(etcdsource.Config{Client: c, Prefix: prefix, PageSize: 7, ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 500 * time.Millisecond}), now: map[objects.Key]int32{}}
	initial, err := f.src.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.apply(initial)
	f.batches = 0
	return f
}

func (f *follower) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.src.Run(ctx, f.apply) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// TestListThenWatch reads what is there at one revision, in pages, then
// follows creates, updates and deletes, and ignores what Switchyard
// itself writes under the prefix.
func TestListThenWatch(t *testing.T) {
	e := etcdtest.Start(t)
	c := e.Client(t)
	for i := range 20 {
		put(t, c, serviceKey("shop", fmt.Sprintf("s%d", i)), serviceJSON("shop", fmt.Sprintf("s%d", i), 80))
	}
	put(t, c, prefix+"status/service/shop/s1", `{"not": "an object"}`)
	put(t, c, "/other/service/shop/x", serviceJSON("shop", "x", 80))
	f := start(t, c)
	if f.size() != 20 {
		t.Fatalf("initial load has %d objects, want 20", f.size())
	}
	if f.src.Lists() != 1 {
		t.Errorf("Lists = %d, want 1", f.src.Lists())
	}
	f.run(t)
	put(t, c, serviceKey("shop", "new"), serviceJSON("shop", "new", 81))
	put(t, c, serviceKey("shop", "s0"), serviceJSON("shop", "s0", 82))
	if _, err := c.Delete(context.Background(), serviceKey("shop", "s1")); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the create, update and delete", func() bool {
		p0, _ := f.port("shop", "s0")
		pn, _ := f.port("shop", "new")
		_, s1 := f.port("shop", "s1")
		return p0 == 82 && pn == 81 && !s1
	})
	if len(f.src.Problems()) != 0 {
		t.Errorf("problems: %v", f.src.Problems())
	}
}

// TestBadValuesNamedByKey leaves out values that do not load and says why,
// by key, while every other object loads; fixing a value loads it.
func TestBadValuesNamedByKey(t *testing.T) {
	e := etcdtest.Start(t)
	c := e.Client(t)
	put(t, c, serviceKey("shop", "good"), serviceJSON("shop", "good", 80))
	bad := map[string]struct{ value, want string }{
		serviceKey("shop", "typo"):   {`{"apiVersion":"v1","kind":"Service","metadata":{"name":"typo","namespace":"shop"},"spec":{"portz":[]}}`, "portz"},
		serviceKey("shop", "other"):  {serviceJSON("shop", "elsewhere", 80), "the key names Service shop/other"},
		serviceKey("shop", "yaml"):   {"kind: [", "yaml"},
		prefix + "gadget/shop/x":     {serviceJSON("shop", "x", 80), `"gadget" is not a kind`},
		serviceKey("shop", "two"):    {serviceJSON("shop", "two", 80) + "\n---\n" + serviceJSON("shop", "two", 81), "2 objects"},
		prefix + "service/shop":      {serviceJSON("shop", "x", 80), "<namespace>/<name>"},
		serviceKey("shop", "deploy"): {`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"deploy","namespace":"shop"}}`, "not read by switchyard"},
	}
	for k, v := range bad {
		put(t, c, k, v.value)
	}
	f := start(t, c)
	if _, ok := f.port("shop", "good"); !ok || f.size() != 1 {
		t.Errorf("loaded %d objects, want only Service shop/good", f.size())
	}
	got := map[string]string{}
	for _, p := range f.src.Problems() {
		got[p.File] = p.String()
	}
	for k, v := range bad {
		if !strings.HasPrefix(got[k], k+":") || !strings.Contains(got[k], v.want) {
			t.Errorf("problem for %s = %q, want it to name the key and say %q", k, got[k], v.want)
		}
	}
	if len(got) != len(bad) {
		t.Errorf("%d problems, want %d: %v", len(got), len(bad), got)
	}
	if d := f.src.ReadyDetail(); !strings.Contains(d, fmt.Sprintf("%d values not loaded", len(bad))) {
		t.Errorf("ReadyDetail = %q, want it to count the values not loaded", d)
	}
	f.run(t)
	put(t, c, serviceKey("shop", "typo"), serviceJSON("shop", "typo", 90))
	testenv.WaitFor(t, 10*time.Second, "the fixed value to load", func() bool {
		p, _ := f.port("shop", "typo")
		return p == 90 && len(f.src.Problems()) == len(bad)-1
	})
}

// TestCompactionRelists starts watching from a revision etcd has
// compacted away: the source lists again and loses nothing, neither the
// writes nor the delete it missed.
func TestCompactionRelists(t *testing.T) {
	e := etcdtest.Start(t)
	c := e.Client(t)
	put(t, c, serviceKey("shop", "a"), serviceJSON("shop", "a", 80))
	put(t, c, serviceKey("shop", "b"), serviceJSON("shop", "b", 80))
	f := start(t, c)
	// Between the list and the watch, as in a slow first build:
	put(t, c, serviceKey("shop", "c"), serviceJSON("shop", "c", 80))
	put(t, c, serviceKey("shop", "a"), serviceJSON("shop", "a", 81))
	if _, err := c.Delete(context.Background(), serviceKey("shop", "b")); err != nil {
		t.Fatal(err)
	}
	rev := put(t, c, serviceKey("shop", "d"), serviceJSON("shop", "d", 80))
	if _, err := c.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	testenv.WaitFor(t, 10*time.Second, "the state after the compaction", func() bool {
		a, _ := f.port("shop", "a")
		_, b := f.port("shop", "b")
		_, cc := f.port("shop", "c")
		_, d := f.port("shop", "d")
		return a == 81 && !b && cc && d && f.size() == 3
	})
	if n := f.src.Lists(); n != 2 {
		t.Errorf("Lists = %d, want 2: the first, and one after the compaction", n)
	}
	put(t, c, serviceKey("shop", "e"), serviceJSON("shop", "e", 80))
	testenv.WaitFor(t, 10*time.Second, "a write after the re-list", func() bool { _, ok := f.port("shop", "e"); return ok })
}

// TestRestartResumes restarts etcd under a running watch of a client
// configured as serve configures it: the source says
// etcd is unreachable meanwhile, keeps what it has, and then resumes from
// the last revision seen without listing again.
func TestRestartResumes(t *testing.T) {
	e := etcdtest.Start(t)
	c := serveClient(t, e)
	put(t, c, serviceKey("shop", "a"), serviceJSON("shop", "a", 80))
	f := start(t, c)
	f.run(t)
	e.Stop()
	testenv.WaitFor(t, 20*time.Second, "the source to notice etcd is gone", func() bool { return !f.src.Reachable() })
	if d := f.src.ReadyDetail(); !strings.Contains(d, "unreachable since") || !strings.Contains(d, "serving the last configuration read") {
		t.Errorf("ReadyDetail = %q, want it to say etcd is unreachable and the last configuration is served", d)
	}
	if _, ok := f.port("shop", "a"); !ok {
		t.Error("Service shop/a dropped while etcd was down")
	}
	e.Restart()
	w := e.Client(t)
	put(t, w, serviceKey("shop", "b"), serviceJSON("shop", "b", 80))
	restarted := time.Now()
	testenv.WaitFor(t, 30*time.Second, "a write after the restart", func() bool { _, ok := f.port("shop", "b"); return ok })
	t.Logf("a write after etcd's restart reached the source %v after the Put returned", time.Since(restarted))
	testenv.WaitFor(t, 20*time.Second, "the source to see etcd again", f.src.Reachable)
	if n := f.src.Lists(); n != 1 {
		t.Errorf("Lists = %d, want 1: the watch resumes, it does not reload", n)
	}
}

// portOf is a Service's first port, what the tests change.
func portOf(obj runtime.Object) int32 {
	if svc, ok := obj.(*objects.Service); ok && len(svc.Spec.Ports) > 0 {
		return svc.Spec.Ports[0].Port
	}
	return -1
}

// TestStartWaitsForEtcd starts while etcd is down: Start waits, saying
// so, and returns the first full list once etcd answers.
func TestStartWaitsForEtcd(t *testing.T) {
	e := etcdtest.Start(t)
	c := serveClient(t, e)
	put(t, c, serviceKey("shop", "a"), serviceJSON("shop", "a", 80))
	e.Stop()
	src := etcdsource.New(etcdsource.Config{Client: c, Prefix: prefix, ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 500 * time.Millisecond})
	type started struct {
		n   int
		err error
	}
	done := make(chan started, 1)
	go func() {
		cs, err := src.Start(context.Background())
		done <- started{len(cs), err}
	}()
	testenv.WaitFor(t, 20*time.Second, "Start to notice etcd is down", func() bool { return !src.Reachable() })
	select {
	case s := <-done:
		t.Fatalf("Start returned %d objects, %v while etcd was down", s.n, s.err)
	default:
	}
	e.Restart()
	select {
	case s := <-done:
		if s.err != nil || s.n != 1 {
			t.Errorf("Start = %d objects, %v; want Service shop/a", s.n, s.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Start did not return after etcd came back")
	}
}

// serveClient is a client configured as serve configures one.
func serveClient(t *testing.T, e *etcdtest.Server) *clientv3.Client {
	t.Helper()
	c, err := etcdsource.NewClient(etcdsource.ClientOptions{Endpoints: []string{e.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestStatusWritesAreNotWatched: status and election keys written under
// the prefix never reach the source, neither as a watch event nor as a
// batch, while objects written after them, in every range of the prefix
// the source watches, still do. Each range is delivered in revision
// order, so once the later objects are in, an earlier status write that
// was watched would have been counted.
func TestStatusWritesAreNotWatched(t *testing.T) {
	e := etcdtest.Start(t)
	c := e.Client(t)
	put(t, c, serviceKey("shop", "a"), serviceJSON("shop", "a", 80))
	f := start(t, c)
	f.run(t)
	for i := range 20 {
		put(t, c, fmt.Sprintf("%sstatus/httpproxy/shop/p%d", prefix, i), `{"currentStatus": "valid"}`)
	}
	put(t, c, prefix+"leader/status/694d7e2b", "replica-1")
	// One key in each range: before "leader/", between it and "status/",
	// and after "status/".
	put(t, c, prefix+"httpproxy/shop/bad", "{not yaml")
	put(t, c, serviceKey("shop", "a"), serviceJSON("shop", "a", 81))
	put(t, c, prefix+"tlscertificatedelegation/shop/bad", "{not yaml")
	testenv.WaitFor(t, 10*time.Second, "the three object writes", func() bool {
		p, _ := f.port("shop", "a")
		return p == 81 && len(f.src.Problems()) == 2
	})
	if n := f.src.WatchEvents(); n != 3 {
		t.Errorf("the watch delivered %d events, want the 3 object writes alone", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.batches != 1 {
		t.Errorf("%d batches emitted, want 1 (the Service; bad values emit nothing)", f.batches)
	}
}
