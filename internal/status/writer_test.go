package status_test

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/status"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

func client(t *testing.T) *rest.RESTClient {
	t.Helper()
	c, err := k8ssource.RESTClient(env.Config, switchyardv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createProxy creates an HTTPProxy and returns it as the server has it.
func createProxy(t *testing.T, ns, name string) *switchyardv1.HTTPProxy {
	t.Helper()
	p := &switchyardv1.HTTPProxy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       switchyardv1.HTTPProxySpec{VirtualHost: &switchyardv1.VirtualHost{Fqdn: name + ".example.com"}},
	}
	if err := client(t).Post().Namespace(ns).Resource("httpproxies").Body(p).Do(context.Background()).Into(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func getProxy(t *testing.T, ns, name string) *switchyardv1.HTTPProxy {
	t.Helper()
	p := &switchyardv1.HTTPProxy{}
	if err := client(t).Get().Namespace(ns).Resource("httpproxies").Name(name).Do(context.Background()).Into(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// cache runs a Kubernetes source for ns: the writer compares with its
// cache, as it does in `switchyard serve`.
func cache(t *testing.T, ns string) *k8ssource.Source {
	t.Helper()
	src, err := k8ssource.New(k8ssource.Config{REST: env.Config, Namespaces: []string{ns}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := src.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return src
}

// startWriter runs a writer that needs no Lease.
func startWriter(t *testing.T, objs func(objects.Key) runtime.Object, now func() time.Time) (*status.Writer, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	w, err := status.New(status.Config{REST: env.Config, Objects: objs, Election: status.Election{Disabled: true}, Registry: reg, Log: slog.New(slog.DiscardHandler), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return w, reg
}

// updates returns switchyard_status_updates_total{result}.
func updates(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "switchyard_status_updates_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func statusOf(key objects.Key, gen int64, state, desc string, errs ...switchyardv1.SubCondition) *dag.Status {
	return &dag.Status{Key: key, Generation: gen, State: state, Description: desc, Errors: errs}
}

// TestWriteSkipAndTransition writes a status once, skips writing it again,
// and moves lastTransitionTime only when the condition flips.
func TestWriteSkipAndTransition(t *testing.T) {
	ns := env.Namespace(t)
	p := createProxy(t, ns, "app")
	key := objects.Key{Kind: objects.KindHTTPProxy, Namespace: ns, Name: "app"}
	src := cache(t, ns)
	var clock atomic.Int64 // minutes after start
	start := time.Now().Truncate(time.Second)
	w, reg := startWriter(t, src.Get, func() time.Time { return start.Add(time.Duration(clock.Load()) * time.Minute) })

	w.Update([]*dag.Status{statusOf(key, p.Generation, switchyardv1.StatusValid, "valid HTTPProxy")})
	testenv.WaitFor(t, 10*time.Second, "status valid", func() bool { return getProxy(t, ns, "app").Status.CurrentStatus == "valid" })
	got := getProxy(t, ns, "app")
	valid := got.Status.Conditions[0]
	if valid.Type != "Valid" || valid.Status != metav1.ConditionTrue || valid.ObservedGeneration != p.Generation {
		t.Fatalf("condition: %+v", valid)
	}

	// The same status again, before and after the cache has caught up
	// with the write: no second write.
	w.Update([]*dag.Status{statusOf(key, p.Generation, switchyardv1.StatusValid, "valid HTTPProxy")})
	testenv.WaitFor(t, 10*time.Second, "a check without a write", func() bool { return updates(t, reg, "unchanged") >= 1 })
	testenv.WaitFor(t, 10*time.Second, "the cache to see the status", func() bool {
		o := src.Get(key)
		return o != nil && o.(*switchyardv1.HTTPProxy).Status.CurrentStatus == "valid"
	})
	w.Update([]*dag.Status{statusOf(key, p.Generation, switchyardv1.StatusValid, "valid HTTPProxy")})
	testenv.WaitFor(t, 10*time.Second, "a second check without a write", func() bool { return updates(t, reg, "unchanged") >= 2 })
	if n := updates(t, reg, "written"); n != 1 {
		t.Fatalf("%v writes, want 1", n)
	}

	// Invalid, a minute later: the condition flips and its transition
	// time moves.
	clock.Store(1)
	e1 := switchyardv1.SubCondition{Type: dag.ErrService, Reason: "ServiceNotFound", Message: "spec.routes[0].services[0].name: Service a not found"}
	w.Update([]*dag.Status{statusOf(key, p.Generation, switchyardv1.StatusInvalid, e1.Message, e1)})
	testenv.WaitFor(t, 10*time.Second, "status invalid", func() bool { return getProxy(t, ns, "app").Status.CurrentStatus == "invalid" })
	inv := getProxy(t, ns, "app").Status.Conditions[0]
	if inv.Status != metav1.ConditionFalse || inv.Reason != "ServiceNotFound" || !inv.LastTransitionTime.Equal(ptrTime(start.Add(time.Minute))) || len(inv.Errors) != 1 {
		t.Fatalf("invalid condition: %+v (valid was %v)", inv, valid.LastTransitionTime)
	}

	// Still invalid, another message, a minute later: the transition
	// time stays.
	clock.Store(2)
	e2 := e1
	e2.Message = "spec.routes[0].services[0].name: Service b not found"
	w.Update([]*dag.Status{statusOf(key, p.Generation, switchyardv1.StatusInvalid, e2.Message, e2)})
	testenv.WaitFor(t, 10*time.Second, "the new message", func() bool {
		return getProxy(t, ns, "app").Status.Description == e2.Message
	})
	if again := getProxy(t, ns, "app").Status.Conditions[0]; !again.LastTransitionTime.Equal(&inv.LastTransitionTime) {
		t.Fatalf("lastTransitionTime moved without a transition: %v -> %v", inv.LastTransitionTime, again.LastTransitionTime)
	}
}

// TestConflictIsRetried gives the writer a stale object: the API server
// answers 409, and the writer rereads the object and writes again.
func TestConflictIsRetried(t *testing.T) {
	ns := env.Namespace(t)
	stale := createProxy(t, ns, "app")
	fresh := stale.DeepCopy()
	fresh.Labels = map[string]string{"touched": "yes"}
	if err := client(t).Put().Namespace(ns).Resource("httpproxies").Name("app").Body(fresh).Do(context.Background()).Into(fresh); err != nil {
		t.Fatal(err)
	}
	key := objects.Key{Kind: objects.KindHTTPProxy, Namespace: ns, Name: "app"}
	w, reg := startWriter(t, func(objects.Key) runtime.Object { return stale }, nil)
	w.Update([]*dag.Status{statusOf(key, stale.Generation, switchyardv1.StatusValid, "valid HTTPProxy")})
	testenv.WaitFor(t, 10*time.Second, "status valid", func() bool { return getProxy(t, ns, "app").Status.CurrentStatus == "valid" })
	if c := updates(t, reg, "conflict"); c < 1 {
		t.Fatalf("no conflict was retried (written %v)", updates(t, reg, "written"))
	}
	if got := getProxy(t, ns, "app"); got.Labels["touched"] != "yes" {
		t.Fatalf("the retry overwrote the newer object: %v", got.Labels)
	}
}

func ptrTime(t time.Time) *metav1.Time { mt := metav1.NewTime(t); return &mt }

// TestApplyPartialUpdates: a build's status update marks only the objects
// it names, so an unchanged object is not even compared again.
func TestApplyPartialUpdates(t *testing.T) {
	ns := env.Namespace(t)
	pa, pb := createProxy(t, ns, "a"), createProxy(t, ns, "b")
	ka := objects.Key{Kind: objects.KindHTTPProxy, Namespace: ns, Name: "a"}
	kb := objects.Key{Kind: objects.KindHTTPProxy, Namespace: ns, Name: "b"}
	src := cache(t, ns)
	w, reg := startWriter(t, src.Get, nil)
	w.Apply(dag.StatusUpdate{All: true, Changed: []*dag.Status{
		statusOf(ka, pa.Generation, switchyardv1.StatusValid, "valid HTTPProxy"),
		statusOf(kb, pb.Generation, switchyardv1.StatusValid, "valid HTTPProxy"),
	}})
	// The metric moves after a write reaches the API server: each wait
	// waits for both.
	testenv.WaitFor(t, 10*time.Second, "both valid", func() bool {
		return getProxy(t, ns, "a").Status.CurrentStatus == "valid" && getProxy(t, ns, "b").Status.CurrentStatus == "valid" && updates(t, reg, "written") >= 2
	})
	before := updates(t, reg, "written") + updates(t, reg, "unchanged")

	e := switchyardv1.SubCondition{Type: dag.ErrService, Reason: "ServiceNotFound", Message: "spec.routes[0].services[0]: Service x not found"}
	w.Apply(dag.StatusUpdate{Changed: []*dag.Status{statusOf(kb, pb.Generation, switchyardv1.StatusInvalid, e.Message, e)}})
	testenv.WaitFor(t, 10*time.Second, "b invalid", func() bool {
		return getProxy(t, ns, "b").Status.CurrentStatus == "invalid" && updates(t, reg, "written")+updates(t, reg, "unchanged") > before
	})
	if n := updates(t, reg, "written") + updates(t, reg, "unchanged") - before; n != 1 {
		t.Fatalf("a partial update naming one object led to %v checks, want 1", n)
	}
	if got := getProxy(t, ns, "a").Status.CurrentStatus; got != "valid" {
		t.Fatalf("a's status changed: %s", got)
	}

	// An object a build no longer reports is left as it is: its status,
	// set by someone else in the meantime, is not written over.
	byHand := getProxy(t, ns, "a")
	byHand.Status.CurrentStatus, byHand.Status.Description = switchyardv1.StatusOrphaned, "set by hand"
	if err := client(t).Put().Namespace(ns).Resource("httpproxies").Name("a").SubResource("status").Body(byHand).Do(context.Background()).Into(byHand); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the cache to see a's new status", func() bool {
		o := src.Get(ka)
		return o != nil && o.(*switchyardv1.HTTPProxy).Status.CurrentStatus == switchyardv1.StatusOrphaned
	})
	w.Apply(dag.StatusUpdate{
		Removed: []objects.Key{ka},
		Changed: []*dag.Status{statusOf(kb, pb.Generation, switchyardv1.StatusValid, "valid HTTPProxy")},
	})
	testenv.WaitFor(t, 10*time.Second, "b valid again", func() bool { return getProxy(t, ns, "b").Status.CurrentStatus == "valid" })
	if got := getProxy(t, ns, "a").Status.CurrentStatus; got != switchyardv1.StatusOrphaned {
		t.Fatalf("a removed object's status must be left alone, got %s", got)
	}
}
