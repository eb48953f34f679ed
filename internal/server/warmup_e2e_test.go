package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"k8s.io/client-go/rest"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/testenv"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestK8sWarmupServesTheCompleteFirstView: with the Kubernetes source, the
// objects the informers list are built while the others still list, and
// what is served and reported once they have all synced is what a control
// plane started after the list, building it in one batch, serves and
// reports. The EndpointSlices' list is held back until the rest has been
// built, so that the warm-up certainly happens; an ADS stream connected
// from the start gets nothing until the source has synced, and then the
// complete configuration. (The API server refuses loopback endpoints, so
// no RPC can reach a backend here: TestClientsConnectBeforeTheFirstBuild
// has gRPC's own xDS client wait for the first build.)
func TestK8sWarmupServesTheCompleteFirstView(t *testing.T) {
	env := kube.Get(t)
	ns := env.Namespace(t)
	if _, _, err := env.Apply(context.Background(), []byte(warmupObjects(ns)), false); err != nil {
		t.Fatal(err)
	}

	release := make(chan struct{})
	rc := rest.CopyConfig(env.Config)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &heldList{rt: rt, resource: "/endpointslices", release: release}
	})
	synced := make(chan struct{})
	src := &warmCounter{Source: newKubeSource(t, rc, ns, func() { close(synced) })}
	statuses := &firstStatuses{synced: synced}
	s := server.New(warmupConfig(statuses.record))
	addr, err := s.ListenXDS()
	if err != nil {
		t.Fatal(err)
	}
	runSource(t, s, src)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := firstCDSAndLDS(ctx, t, addr.String(), synced)

	testenv.WaitFor(t, time.Minute, "a warm-up batch", func() bool { return src.objects.Load() > 0 })
	if closed(synced) {
		t.Fatal("the source synced while the EndpointSlices' list was held back")
	}
	if s.XDSAddr() != nil {
		t.Error("XDSAddr is set during the warm-up")
	}
	close(release)
	var got adsFirst
	select {
	case got = <-first:
	case <-time.After(time.Minute):
		t.Fatal("no CDS and LDS responses within a minute of the EndpointSlices' list")
	}
	if got.err != nil {
		t.Fatal(got.err)
	}

	// The reference: the same objects, listed in full before anything is
	// built.
	refStatuses := &firstStatuses{}
	ref := runSource(t, server.New(warmupConfig(refStatuses.record)), onlyStart{newKubeSource(t, env.Config, ns, nil)})
	waitFor(t, time.Minute, "the reference to serve", func() bool { return ref.XDSAddr() != nil })
	waitFor(t, time.Minute, "the reference's statuses", func() bool { _, _, n := refStatuses.get(); return n > 0 })
	for _, g := range xdsres.Groups {
		for _, typ := range xdsres.TypesOf(g) {
			if d := cmp.Diff(versions(ref.Cache().Resources(g, typ)), versions(s.Cache().Resources(g, typ))); d != "" {
				t.Errorf("group %s, %s: served after the warm-up (+) and by the reference (-) differ:\n%s", g, xdsres.ShortType(typ), d)
			}
		}
	}
	for typ, resp := range got.byType {
		if !sameResources(resp.GetResources(), ref.Cache().Resources(xdsres.GroupEnvoy, typ)) {
			t.Errorf("the first %s response holds %d resources, not the reference's %d", xdsres.ShortType(typ), len(resp.GetResources()), len(ref.Cache().Resources(xdsres.GroupEnvoy, typ)))
		}
	}
	if src.objects.Load()+src.rest.Load() != 7 {
		t.Errorf("the source delivered %d objects in warm-up batches and %d after, want the 7 of the namespace", src.objects.Load(), src.rest.Load())
	}

	u, early, n := statuses.get()
	switch {
	case early:
		t.Error("statuses were reported before the source synced")
	case n != 1:
		t.Fatalf("%d status updates, want the first build's only", n)
	case !u.All:
		t.Error("the first status update after a warm-up is not complete (All)")
	}
	ru, _, _ := refStatuses.get()
	want := statusLines(ru)
	if d := cmp.Diff(want, statusLines(u)); d != "" {
		t.Errorf("statuses after the warm-up (+) and of one build of everything (-) differ:\n%s", d)
	}
	if want["HTTPProxy "+ns+"/broken"] == "" || !strings.Contains(want["HTTPProxy "+ns+"/broken"], "invalid") {
		t.Errorf("the broken proxy's status %q is not invalid: the test lost its point", want["HTTPProxy "+ns+"/broken"])
	}
}

// warmupObjects are two Services with an endpoint each, a proxy splitting
// between them, one using one of them and one referring to a Service that
// does not exist.
func warmupObjects(ns string) string {
	var b strings.Builder
	for i, svc := range []string{"a", "b"} {
		fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  ports: [{name: grpc, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-0, namespace: %[2]s, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{name: grpc, port: 8080}]
endpoints:
- addresses: [192.0.2.%[3]d]
  zone: z%[3]d
  conditions: {ready: true, serving: true, terminating: false}
---
`, svc, ns, i+1)
	}
	for _, p := range []struct{ name, services string }{
		{"app", "{name: a, port: 80, weight: 50}, {name: b, port: 80, weight: 50}"},
		{"broken", "{name: missing, port: 80}"},
		{"other", "{name: b, port: 80}"},
	} {
		fmt.Fprintf(&b, `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  virtualhost: {fqdn: %[1]s.example.com}
  routes:
  - services: [%[3]s]
---
`, p.name, ns, p.services)
	}
	return b.String()
}

func warmupConfig(onStatuses func(dag.StatusUpdate)) server.Config {
	cfg := server.Config{XDSAddress: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), OnStatuses: onStatuses}
	cfg.Pipeline.Translator = translator.DefaultOptions()
	return cfg
}

func newKubeSource(t *testing.T, rc *rest.Config, ns string, onSynced func()) *k8ssource.Source {
	t.Helper()
	src, err := k8ssource.New(k8ssource.Config{REST: rc, Namespaces: []string{ns}, Log: slog.New(slog.DiscardHandler), OnSynced: onSynced})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// statusLines is each status of an update as one line, by object.
func statusLines(u dag.StatusUpdate) map[string]string {
	out := map[string]string{}
	for _, st := range u.Changed {
		out[st.Key.String()] = fmt.Sprintf("%s: %s %v %v", st.State, st.Description, st.Errors, st.Warnings)
	}
	return out
}

// heldList holds back requests for one resource (its list and its watch)
// until release is closed.
type heldList struct {
	rt       http.RoundTripper
	resource string
	release  <-chan struct{}
}

func (h *heldList) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, h.resource) {
		select {
		case <-h.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return h.rt.RoundTrip(r)
}

// warmCounter counts what the source hands over in warm-up batches and
// after them.
type warmCounter struct {
	*k8ssource.Source
	objects, rest atomic.Int64
}

func (w *warmCounter) StartWarm(ctx context.Context, warm func([]objects.Change)) ([]objects.Change, error) {
	rest, err := w.Source.StartWarm(ctx, func(b []objects.Change) {
		w.objects.Add(int64(len(b)))
		warm(b)
	})
	w.rest.Add(int64(len(rest)))
	return rest, err
}

// onlyStart hides a source's StartWarm: the control plane builds its
// first view in one batch, as it does for sources that cannot warm up.
type onlyStart struct{ server.Source }

// firstStatuses keeps the first status update, whether it came before
// synced was closed, and how many came.
type firstStatuses struct {
	synced <-chan struct{}
	mu     sync.Mutex
	first  dag.StatusUpdate
	early  bool
	n      int
}

func (f *firstStatuses) record(u dag.StatusUpdate) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.first = u
	}
	f.n++
	if f.synced != nil && !closed(f.synced) {
		f.early = true
	}
}

func (f *firstStatuses) get() (dag.StatusUpdate, bool, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.first, f.early, f.n
}

type adsFirst struct {
	byType map[string]*envoy_service_discovery_v3.DiscoveryResponse
	err    error
}

// firstCDSAndLDS opens an ADS stream at once (it waits, connected, until
// the server answers) and delivers its first CDS and LDS responses, or an
// error, in particular for a response that came before synced was closed.
func firstCDSAndLDS(ctx context.Context, t *testing.T, addr string, synced <-chan struct{}) <-chan adsFirst {
	t.Helper()
	cc := dialXDS(t, addr)
	out := make(chan adsFirst, 1)
	go func() {
		got := adsFirst{byType: map[string]*envoy_service_discovery_v3.DiscoveryResponse{}}
		defer func() { out <- got }()
		st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx, grpc.WaitForReady(true))
		if err != nil {
			got.err = err
			return
		}
		for _, typ := range []string{resource.ClusterType, resource.ListenerType} {
			if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: typ}); err != nil {
				got.err = err
				return
			}
		}
		for len(got.byType) < 2 && got.err == nil {
			resp, err := st.Recv()
			switch {
			case err != nil:
				got.err = err
			case !closed(synced):
				got.err = fmt.Errorf("a %s response before the source synced", xdsres.ShortType(resp.GetTypeUrl()))
			default:
				got.byType[resp.GetTypeUrl()] = resp
			}
		}
	}()
	return out
}

// versions lists resources as name@version.
func versions(rs []*xdsres.Resource) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Name+"@"+r.Version)
	}
	return out
}

// sameResources reports whether a response holds exactly the resources.
func sameResources(got []*anypb.Any, want []*xdsres.Resource) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(a *anypb.Any) bool { return proto.Equal(a, w.Any) }) {
			return false
		}
	}
	return true
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
