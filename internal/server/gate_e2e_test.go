package server_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
)

// objectSource is a source that hands the control plane objects as they
// are, past any source's checks, as a buggy or lenient source would.
type objectSource struct {
	initial []objects.Change
	batches chan []objects.Change
}

func (o *objectSource) Start(context.Context) ([]objects.Change, error) { return o.initial, nil }

func (o *objectSource) Run(ctx context.Context, emit func([]objects.Change)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case b := <-o.batches:
			emit(b)
		}
	}
}

func changes(t *testing.T, objs ...runtime.Object) []objects.Change {
	t.Helper()
	var out []objects.Change
	for _, o := range objs {
		k, err := objects.KeyOf(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, objects.Change{Key: k, Object: o})
	}
	return out
}

// grpcService is a Service with one EndpointSlice of one address.
func grpcService(name, ip string, port int32) []runtime.Object {
	grpcName := "grpc"
	return []runtime.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: grpcName, Port: 80, TargetPort: intstr.FromInt32(8080)}},
		}},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: name + "-0", Labels: map[string]string{objects.ServiceNameLabel: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: &grpcName, Port: &port}},
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Zone: new("z1")}},
		},
	}
}

func hostProxy(name, fqdn, service string) *switchyardv1.HTTPProxy {
	return &switchyardv1.HTTPProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: switchyardv1.HTTPProxySpec{
		VirtualHost: &switchyardv1.VirtualHost{Fqdn: fqdn},
		Routes:      []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: service, Port: 80}}}},
	}}
}

// statusLog keeps the last status the control plane reported for each
// object.
type statusLog struct {
	mu   sync.Mutex
	last map[objects.Key]*dag.Status
}

func (l *statusLog) record(u dag.StatusUpdate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u.All || l.last == nil {
		l.last = map[objects.Key]*dag.Status{}
	}
	for _, st := range u.Changed {
		l.last[st.Key] = st
	}
	for _, k := range u.Removed {
		delete(l.last, k)
	}
}

func (l *statusLog) has(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last[objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: name}] != nil
}

func (l *statusLog) snapshot() []*dag.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*dag.Status
	for _, st := range l.last {
		out = append(out, st)
	}
	return out
}

// says reports whether an HTTPProxy's last status has a ResourceRejected
// error holding text ("" for none at all).
func (l *statusLog) says(name, text string) bool {
	return l.holds(name, "ResourceRejected", text, func(st *dag.Status) []switchyardv1.SubCondition { return st.Errors })
}

// warns reports whether an HTTPProxy's last status has an EndpointInvalid
// warning holding text.
func (l *statusLog) warns(name, text string) bool {
	return l.holds(name, "EndpointInvalid", text, func(st *dag.Status) []switchyardv1.SubCondition { return st.Warnings })
}

// holds reports whether the conditions of an HTTPProxy's last status that
// of picks include one of reason holding text.
func (l *statusLog) holds(name, reason, text string, of func(*dag.Status) []switchyardv1.SubCondition) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.last[objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: name}]
	if st == nil {
		return false
	}
	for _, c := range of(st) {
		if c.Reason == reason && (text == "" || strings.Contains(c.Message, text)) {
			return true
		}
	}
	return false
}

// TestGateThroughServe runs serve on a source that lets bad EndpointSlices
// through, and a translator that emits them (which the real one no longer
// does: it leaves them out with an EndpointInvalid warning): a served
// Service's slice gets port 70000 and a new host comes
// with the address 10.0.0.999. gRPC's own xDS client keeps calling the
// last good endpoint and NACKs nothing; what any client is sent passes
// xdscheck; the proxies' statuses name the values; fixing the slice lets
// the new endpoint out.
func TestGateThroughServe(t *testing.T) {
	b1, b2 := grpcpeer.StartBackend(t, "b1"), grpcpeer.StartBackend(t, "b2")
	// A translator that emits the endpoints clients reject, as one with a
	// bug would: what the gate is there to catch.
	opts := translator.DefaultOptions()
	opts.KeepUnusableEndpoints = true
	ctx := context.Background()
	s, src, statuses := serveObjects(t, opts, changes(t, append(grpcService("app", "127.0.0.1", int32(b1.Port)), hostProxy("app", "app.example.com", "app"))...))
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, "b1")

	bad := grpcService("app", "127.0.0.1", 70000)[1:]
	bad = append(bad, grpcService("other", "10.0.0.999", 8080)...)
	src.batches <- changes(t, append(bad, hostProxy("other", "other.example.com", "other"))...)
	waitFor(t, 10*time.Second, "the batch to be built", func() bool { return statuses.has("other") })
	checkServed(ctx, t, s)
	if !statuses.says("app", "port_value: 70000") || !statuses.says("other", `"10.0.0.999" is not an IP address`) {
		t.Errorf("the proxies do not say what is withheld: %v", statuses.snapshot())
	}
	if m := metric(t, s, `switchyard_gate_withheld_resources_total{gateway="",group="grpc"`); m == "" {
		t.Error("the metric does not count the grpc group's withheld load assignments")
	}
	if counts, failed := tally(context.Background(), c, 100); failed > 0 || counts["b1"] != 100 {
		t.Fatalf("the client must keep calling b1: %v, %d failed", counts, failed)
	}
	noNACKs(t, s)

	src.batches <- changes(t, grpcService("app", "127.0.0.1", int32(b2.Port))[1:]...)
	warmUp(t, c, "b2")
	waitFor(t, 10*time.Second, "shop/app to be valid again", func() bool { return !statuses.says("app", "") })
	noNACKs(t, s)
}

// serveObjects runs serve with translator options opts on an objectSource
// that starts with initial, and returns the server once it listens, the
// source to send batches to and the statuses it reports.
func serveObjects(t *testing.T, opts translator.Options, initial []objects.Change) (*server.Server, *objectSource, *statusLog) {
	t.Helper()
	src := &objectSource{initial: initial, batches: make(chan []objects.Change)}
	statuses := &statusLog{}
	cfg := server.Config{
		XDSAddress: "127.0.0.1:0", AdminAddress: "127.0.0.1:0",
		Holdoff: 20 * time.Millisecond, MaxWait: 100 * time.Millisecond,
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnStatuses: statuses.record,
	}
	cfg.Pipeline.Translator = opts
	s := server.New(cfg)
	runSource(t, s, src)
	// The first build of the largest inputs here (a 10,000-route host)
	// takes over a minute under -race on a busy 2-core machine.
	waitFor(t, 3*time.Minute, "the xDS server to listen", func() bool { return s.XDSAddr() != nil })
	return s, src, statuses
}

// TestBadEndpointThroughServe: the input that made the gate freeze a
// Service's endpoints, a slice with the address 10.0.0.999 beside the good
// one, goes through serve and the real translator: gRPC's own xDS client
// keeps calling, the proxy warns of the address, and moving the good slice
// to another backend reaches the client, which a frozen load assignment
// would never let out.
func TestBadEndpointThroughServe(t *testing.T) {
	b1, b2 := grpcpeer.StartBackend(t, "b1"), grpcpeer.StartBackend(t, "b2")
	s, src, statuses := serveObjects(t, translator.DefaultOptions(), changes(t, append(grpcService("app", "127.0.0.1", int32(b1.Port)), hostProxy("app", "app.example.com", "app"))...))
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, "b1")

	bad := grpcService("app", "10.0.0.999", 8080)[1].(*discoveryv1.EndpointSlice)
	bad.Name = "app-bad"
	src.batches <- changes(t, bad)
	waitFor(t, 10*time.Second, "shop/app to warn of 10.0.0.999", func() bool {
		return statuses.warns("app", `EndpointSlice shop/app-bad: endpoint "10.0.0.999" is left out`)
	})
	if statuses.says("app", "") {
		t.Errorf("nothing may be withheld: %v", statuses.snapshot())
	}
	src.batches <- changes(t, grpcService("app", "127.0.0.1", int32(b2.Port))[1:]...)
	warmUp(t, c, "b2")
	if counts, failed := tally(context.Background(), c, 50); failed > 0 || counts["b2"] != 50 {
		t.Fatalf("the client must call b2 alone: %v, %d failed", counts, failed)
	}
	checkServed(context.Background(), t, s)
	noNACKs(t, s)
}

// checkServed asks for every cluster and load assignment of each group,
// as a client would, and checks them with xdscheck.
func checkServed(ctx context.Context, t *testing.T, s *server.Server) {
	t.Helper()
	cc := dialXDS(t, s.XDSAddr().String())
	for _, group := range []string{"envoy", "grpc", "dns"} {
		node := nodeWithGroup("gate-"+group, group, "")
		resp, err := sotwOnce(ctx, cc, node, resource.ClusterType, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range resp.GetResources() {
			m, err := a.UnmarshalNew()
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, m.(interface{ GetName() string }).GetName())
		}
		if len(names) == 0 {
			t.Fatalf("group %s is served no cluster", group)
		}
		resp, err = sotwOnce(ctx, cc, node, resource.EndpointType, 5*time.Second, names...)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range resp.GetResources() {
			m, err := a.UnmarshalNew()
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range xdscheck.Served(m) {
				t.Errorf("group %s is sent an invalid load assignment: %v", group, err)
			}
		}
	}
}
