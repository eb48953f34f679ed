package server_test

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

// kube is the API server of the Kubernetes benchmark, started only when it
// runs.
var kube testenv.Lazy

func TestMain(m *testing.M) {
	code := m.Run()
	kube.Stop()
	os.Exit(code)
}

// BenchmarkK8sTimeToFirstConfig is `serve` on a Kubernetes API server,
// from the moment its informers have synced to the first full CDS and LDS
// responses on an ADS stream that connected at start-up. The objects are
// scalegen.DirectoryShape at SWITCHYARD_BENCH_K8S_ROOTS roots (10,000
// unless set), created in a real kube-apiserver (internal/testenv) before
// the timing starts, which takes minutes at 10,000: the benchmark runs
// only when SWITCHYARD_BENCH_K8S=1 or -bench names it (K8s).
func BenchmarkK8sTimeToFirstConfig(b *testing.B) {
	if f := flag.Lookup("test.bench"); os.Getenv("SWITCHYARD_BENCH_K8S") != "1" && (f == nil || !strings.Contains(f.Value.String(), "K8s")) {
		b.Skip("creates thousands of objects in an API server: run it with SWITCHYARD_BENCH_K8S=1 or -bench K8s")
	}
	roots := 10000
	if v := os.Getenv("SWITCHYARD_BENCH_K8S_ROOTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			b.Fatalf("SWITCHYARD_BENCH_K8S_ROOTS=%q: want a number of roots of at least 10", v)
		}
		roots = n
	}
	b.Run("roots="+perf.Size(roots), func(b *testing.B) {
		env := kube.Get(b)
		set, err := scalegen.Generate(scalegen.DirectoryShape(roots))
		if err != nil {
			b.Fatal(err)
		}
		took := createAll(b, env, set)
		b.Logf("created %d objects in %v", len(set.Objects), took.Round(time.Second))
		var syncs, firsts, cpus perf.Latencies
		for b.Loop() {
			sync, first, cpu := k8sFirstConfig(b, env)
			syncs, firsts, cpus = append(syncs, sync), append(firsts, first), append(cpus, cpu)
		}
		b.ReportMetric(float64(syncs.Percentile(50))/1e6, "sync-ms")
		b.ReportMetric(float64(firsts.Percentile(50))/1e6, "synced-to-first-ms")
		b.ReportMetric(float64(cpus.Percentile(50))/1e6, "synced-to-first-cpu-ms")
		b.ReportMetric(float64(len(set.Objects)), "objects")
	})
}

// k8sFirstConfig runs a control plane on env until an ADS stream has its
// first CDS and LDS responses, and returns how long the informers took to
// sync, how long after that the second response arrived, and the CPU time
// the process spent in between (on a loaded machine the wall time counts
// the other processes too; the API server and etcd are processes of their
// own).
func k8sFirstConfig(b *testing.B, env *testenv.Env) (sync, first, cpu time.Duration) {
	log := slog.New(slog.DiscardHandler)
	var synced, syncedCPU atomic.Int64
	start := time.Now()
	src, err := k8ssource.New(k8ssource.Config{REST: env.Config, Log: log, OnSynced: func() {
		syncedCPU.Store(int64(perf.CPUTime()))
		synced.Store(time.Now().UnixNano())
	}})
	if err != nil {
		b.Fatal(err)
	}
	// Connected while the informers list: it waits, as Envoy does, for the
	// first build.
	untilFirstConfig(b, src, log)
	end, endCPU := time.Now(), perf.CPUTime()
	at := time.Unix(0, synced.Load())
	return at.Sub(start), end.Sub(at), endCPU - time.Duration(syncedCPU.Load())
}

// createAll creates the set's namespaces and objects in the API server, on
// many connections at once, and returns how long it took. Services are
// headless: the API server's test range has too few cluster IPs for tens
// of thousands, and no build reads them.
func createAll(b *testing.B, env *testenv.Env, set *scalegen.Set) time.Duration {
	start := time.Now()
	ctx := context.Background()
	for _, ns := range set.Namespaces {
		if err := env.EnsureNamespace(ctx, ns.Name); err != nil {
			b.Fatal(err)
		}
	}
	rc := rest.CopyConfig(env.Config)
	rc.QPS, rc.Burst = 1e6, 1e6
	clients := map[schema.GroupVersion]*rest.RESTClient{}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, discoveryv1.SchemeGroupVersion, switchyardv1.SchemeGroupVersion, switchyardv1alpha1.SchemeGroupVersion} {
		c, err := k8ssource.RESTClient(rc, gv)
		if err != nil {
			b.Fatal(err)
		}
		clients[gv] = c
	}
	objs := make(chan runtime.Object)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range 32 {
		wg.Go(func() {
			for o := range objs {
				if err := create(ctx, clients, o); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, o := range set.Objects {
		objs <- o
	}
	close(objs)
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
	return time.Since(start)
}

// create posts one object; one that exists already (from an earlier run
// in the same API server) is left as it is.
func create(ctx context.Context, clients map[schema.GroupVersion]*rest.RESTClient, o runtime.Object) error {
	var gv schema.GroupVersion
	var res, ns string
	switch v := o.(type) {
	case *switchyardv1.HTTPProxy:
		gv, res, ns = switchyardv1.SchemeGroupVersion, "httpproxies", v.Namespace
	case *switchyardv1.TLSCertificateDelegation:
		gv, res, ns = switchyardv1.SchemeGroupVersion, "tlscertificatedelegations", v.Namespace
	case *switchyardv1alpha1.ExtensionService:
		gv, res, ns = switchyardv1alpha1.SchemeGroupVersion, "extensionservices", v.Namespace
	case *corev1.Service:
		svc := v.DeepCopy()
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		gv, res, ns, o = corev1.SchemeGroupVersion, "services", v.Namespace, svc
	case *corev1.Secret:
		gv, res, ns = corev1.SchemeGroupVersion, "secrets", v.Namespace
	case *discoveryv1.EndpointSlice:
		gv, res, ns = discoveryv1.SchemeGroupVersion, "endpointslices", v.Namespace
	default:
		return fmt.Errorf("creating a %T: not a kind the benchmark knows", o)
	}
	err := clients[gv].Post().Namespace(ns).Resource(res).Body(o).Do(ctx).Error()
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("creating %s in %s: %w", res, ns, err)
	}
	return err
}
