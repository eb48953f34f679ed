package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/types/known/structpb"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// endpoint is one backend of a Service, in a zone.
type endpoint struct {
	b    *grpcpeer.Backend
	zone string
}

// serviceYAML writes a Service and one EndpointSlice per endpoint: every
// backend listens on its own loopback port, and a slice's port applies to
// all of its endpoints.
func serviceYAML(ns, name string, eps ...endpoint) string {
	st := make([]steered, len(eps))
	for i, ep := range eps {
		st[i] = steered{b: ep.b, zone: ep.zone}
	}
	return steeredServiceYAML(ns, name, false, st...)
}

// steered is one backend of a Service with what steers it.
type steered struct {
	b           *grpcpeer.Backend
	zone        string
	node        string // the EndpointSlice's nodeName, "" for none
	terminating bool   // not ready but still serving: DRAINING
}

// steeredServiceYAML writes a Service, drained or not, and one
// EndpointSlice per backend (each backend listens on its own port).
func steeredServiceYAML(ns, name string, drained bool, eps ...steered) string {
	var sb strings.Builder
	annotations := ""
	if drained {
		annotations = "\n  annotations: {switchyard.dev/drain: \"true\"}"
	}
	fmt.Fprintf(&sb, "apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s%s\nspec:\n  ports: [{name: grpc, port: 80, targetPort: 8080}]\n", name, ns, annotations)
	for i, ep := range eps {
		cond := "{ready: true, serving: true, terminating: false}"
		if ep.terminating {
			cond = "{ready: false, serving: true, terminating: true}"
		}
		node := ""
		if ep.node != "" {
			node = "\n  nodeName: " + ep.node
		}
		fmt.Fprintf(&sb, `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s-%d, namespace: %s, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
ports: [{name: grpc, port: %d}]
endpoints:
- addresses: [127.0.0.1]
  zone: %s
  conditions: %s%s
`, name, i, ns, name, ep.b.Port, ep.zone, cond, node)
	}
	return sb.String()
}

// writeFile replaces a file atomically, as editors and kubectl-like tools
// do, so the watcher sees one complete version.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// controlPlane runs `switchyard serve` in process on loopback ports.
func controlPlane(t *testing.T, dir string) *server.Server {
	t.Helper()
	return controlPlaneWith(t, dir, translator.DefaultOptions())
}

// controlPlaneWith is controlPlane with other translator options (the
// flags --drain-zone, --envoy-*).
func controlPlaneWith(t *testing.T, dir string, opts translator.Options) *server.Server {
	t.Helper()
	return startServer(t, dir, "127.0.0.1:0", func(c *server.Config) {
		c.AdminAddress = "127.0.0.1:0"
		c.Pipeline.Translator = opts
	}).Server
}

// grpcClient dials target through gRPC's own xDS resolver, bootstrapped to
// the control plane.
func grpcClient(t *testing.T, s *server.Server, target string) testgrpc.TestServiceClient {
	t.Helper()
	return grpcClientAt(t, s.XDSAddr(), target)
}

// grpcClientAt is grpcClient for an xDS server at any address, with
// further dial options.
func grpcClientAt(t *testing.T, xdsAddr net.Addr, target string, opts ...grpc.DialOption) testgrpc.TestServiceClient {
	t.Helper()
	return grpcGatewayClient(t, xdsAddr, "", target, opts...)
}

// call makes one RPC and returns the id of the backend that answered.
func call(ctx context.Context, c testgrpc.TestServiceClient) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.UnaryCall(ctx, &testgrpc.SimpleRequest{})
	if err != nil {
		return "", err
	}
	return resp.GetServerId(), nil
}

// tally makes n RPCs and counts answers by backend id, and failures.
func tally(ctx context.Context, c testgrpc.TestServiceClient, n int) (map[string]int, int) {
	counts := map[string]int{}
	failed := 0
	for i := 0; i < n; i++ {
		id, err := call(ctx, c)
		if err != nil {
			failed++
			continue
		}
		counts[id]++
	}
	return counts, failed
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// warmUp calls until every listed backend has answered at least once.
func warmUp(t *testing.T, c testgrpc.TestServiceClient, ids ...string) {
	t.Helper()
	seen := map[string]bool{}
	waitFor(t, 20*time.Second, fmt.Sprintf("answers from %v", ids), func() bool {
		if id, err := call(context.Background(), c); err == nil {
			seen[id] = true
		}
		for _, id := range ids {
			if !seen[id] {
				return false
			}
		}
		return true
	})
}

// shares groups counts by the service each backend belongs to and returns
// percentages.
func shares(counts map[string]int, serviceOf map[string]string) map[string]float64 {
	total := 0
	by := map[string]int{}
	for id, n := range counts {
		by[serviceOf[id]] += n
		total += n
	}
	out := map[string]float64{}
	for svc, n := range by {
		out[svc] = 100 * float64(n) / float64(total)
	}
	return out
}

// metric fetches one line of the admin endpoint's /metrics that starts
// with prefix, "" when absent.
func metric(t *testing.T, s *server.Server, prefix string) string {
	t.Helper()
	for _, line := range metricLines(t, s) {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// noNACKs fails the test if a client rejected anything the control plane
// sent.
func noNACKs(t *testing.T, s *server.Server) {
	t.Helper()
	if n := metric(t, s, `switchyard_xds_nacks_total`); n != "" {
		t.Errorf("the gRPC client rejected something: %s", n)
	}
}

// nodeWithGroup is a node that claims group in its metadata, with agent
// as its user agent name ("" for none).
func nodeWithGroup(id, group, agent string) *envoy_config_core_v3.Node {
	return &envoy_config_core_v3.Node{Id: id, UserAgentName: agent, Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
		xdsres.GroupMetadataKey: structpb.NewStringValue(group),
	}}}
}

// metricLines fetches the admin endpoint's /metrics, line by line.
func metricLines(t *testing.T, s *server.Server) []string {
	t.Helper()
	_, body := adminGet(t, s, "/metrics")
	return strings.Split(body, "\n")
}

// adminGet fetches one path of a server's admin endpoint.
func adminGet(t *testing.T, s *server.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// rpcLoop calls continuously in the background and records failures.
type rpcLoop struct {
	mu     sync.Mutex
	failed []error
	last   map[string]time.Time // first answer of each backend
	latest map[string]time.Time // last answer of each backend
	stop   chan struct{}
	done   chan struct{}
}

func startLoop(c testgrpc.TestServiceClient) *rpcLoop {
	l := &rpcLoop{last: map[string]time.Time{}, latest: map[string]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			id, err := call(context.Background(), c)
			l.mu.Lock()
			if err != nil {
				l.failed = append(l.failed, err)
			} else {
				now := time.Now()
				if _, ok := l.last[id]; !ok {
					l.last[id] = now
				}
				l.latest[id] = now
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// firstSeen returns when a backend first answered, zero if never.
func (l *rpcLoop) firstSeen(id string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last[id]
}

// lastSeen returns when a backend last answered, zero if never.
func (l *rpcLoop) lastSeen(id string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latest[id]
}

func (l *rpcLoop) finish() []error {
	close(l.stop)
	<-l.done
	return l.failed
}
