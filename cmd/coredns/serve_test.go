package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/cmd/coredns/internal/xdstest"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// serveControlPlane implements controlPlane with `switchyard serve
// --source DIR` run in process (internal/server with a DirSource): each DNS
// name is written as manifests — an ExtensionService "<name>.<namespace>"
// with weighted, prioritized targets, their Services and EndpointSlices,
// and a Node with the drain annotation for drained endpoints — and the
// whole pipeline (directory watch, DAG, translator.DNS, xdscache) produces
// what the plugin receives.
type serveControlPlane struct {
	opts translator.Options
	// mesh runs serve with --mesh.
	mesh bool
	// externalNames runs serve with --enable-external-name-services.
	externalNames bool
	dir           string
	xds           string // the address, kept across restarts
	srv           *server.Server
	cancel        context.CancelFunc
	done          chan error
	running       bool
}

func newServeControlPlane(t testing.TB) controlPlane {
	return newServeControlPlaneWith(t, translator.DefaultOptions())
}

// newServeControlPlaneWith is newServeControlPlane with other translator
// options (the flag --drain-zone, say).
func newServeControlPlaneWith(t testing.TB, opts translator.Options) *serveControlPlane {
	s := &serveControlPlane{opts: opts, dir: t.TempDir()}
	s.start(t, "127.0.0.1:0")
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *serveControlPlane) start(t testing.TB, addr string) {
	t.Helper()
	cfg := server.Config{
		XDSAddress: addr,
		Holdoff:    5 * time.Millisecond,
		MaxWait:    50 * time.Millisecond,
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	cfg.Pipeline.Translator = s.opts
	cfg.Pipeline.DAG.Mesh = s.mesh
	cfg.Pipeline.DAG.ExternalNameServices = s.externalNames
	s.srv = server.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	go func() { s.done <- s.srv.Run(ctx, &server.DirSource{Root: s.dir, Log: cfg.Log}) }()
	xdstest.Eventually(t, 10*time.Second, "switchyard serve listening", func() (bool, string) {
		select {
		case err := <-s.done:
			t.Fatalf("switchyard serve: %v", err)
		default:
		}
		return s.srv.XDSAddr() != nil, "not listening"
	})
	s.xds, s.running = s.srv.XDSAddr().String(), true
}

func (s *serveControlPlane) addr() string { return s.xds }

func (s *serveControlPlane) reportsUnhealthy() bool { return false }

func (s *serveControlPlane) stop(t testing.TB) {
	if !s.running {
		return
	}
	s.cancel()
	if err := <-s.done; err != nil {
		t.Errorf("switchyard serve: %v", err)
	}
	s.running = false
}

func (s *serveControlPlane) restart(t testing.TB) { s.start(t, s.xds) }

func (s *serveControlPlane) edsVersion() string {
	return s.srv.Cache().Version(xdsres.GroupDNS, resource.EndpointType)
}

func (s *serveControlPlane) versions() string {
	c := s.srv.Cache()
	return c.Version(xdsres.GroupDNS, resource.ClusterType) + "/" + c.Version(xdsres.GroupDNS, resource.EndpointType)
}

// change edits the directory and, while serving, waits until the DNS
// group's content changed, so that edsVersion names the new content.
func (s *serveControlPlane) change(t testing.TB, edit func()) {
	t.Helper()
	if !s.running {
		edit()
		return
	}
	before := s.versions()
	edit()
	xdstest.Eventually(t, 10*time.Second, "switchyard serve rebuilt", func() (bool, string) {
		return s.versions() != before, "versions " + before
	})
}

func (s *serveControlPlane) apply(t testing.TB, names ...dnsName) {
	t.Helper()
	s.change(t, func() {
		for _, n := range names {
			writeFile(t, s.dir, n.name+".yaml", manifests(n))
		}
	})
}

func (s *serveControlPlane) remove(t testing.TB, name string) {
	t.Helper()
	s.change(t, func() {
		if err := os.Remove(filepath.Join(s.dir, name+".yaml")); err != nil {
			t.Fatal(err)
		}
	})
}

// manifests writes a DNS name "<name>.<namespace>" as an ExtensionService
// with its Services, EndpointSlices and, for drained endpoints, a Node
// carrying switchyard.dev/drain.
func manifests(n dnsName) string {
	name, ns, _ := strings.Cut(n.name, ".")
	drainNode := strings.ReplaceAll(n.name, ".", "-") + "-drained"
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: switchyard.dev/v1alpha1\nkind: ExtensionService\nmetadata: {name: %s, namespace: %s}\nspec:\n  protocol: h2c\n  services:\n", name, ns)
	for _, svc := range n.services {
		_, svcName, _ := strings.Cut(svc.name, "/")
		fmt.Fprintf(&b, "  - {name: %s, port: 80, weight: %d, priority: %d}\n", svcName, svc.weight, svc.priority)
	}
	drained := false
	for _, svc := range n.services {
		_, svcName, _ := strings.Cut(svc.name, "/")
		annotations := ""
		if svc.drained {
			annotations = ", annotations: {switchyard.dev/drain: \"true\"}"
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s%s}\nspec:\n  ports: [{name: http, port: 80, targetPort: 8080}]\n", svcName, ns, annotations)
		fmt.Fprintf(&b, "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: %s-1, namespace: %s, labels: {kubernetes.io/service-name: %s}}\naddressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints:\n", svcName, ns, svcName)
		if len(svc.endpoints) == 0 {
			b.WriteString("  []\n")
		}
		for _, e := range svc.endpoints {
			cond := "{ready: true}"
			node := ""
			if e.node != "" {
				node = "\n  nodeName: " + e.node
			}
			switch e.state {
			case draining:
				node, drained = fmt.Sprintf("\n  nodeName: %s", drainNode), true
			case notReady:
				cond = "{ready: false}"
			case terminating:
				cond = "{ready: false, serving: true, terminating: true}"
			}
			fmt.Fprintf(&b, "- addresses: [%s]\n  zone: %s\n  conditions: %s%s\n", e.addr, e.zone, cond, node)
		}
	}
	if drained {
		b.WriteString("---\n" + nodeYAML(drainNode, true))
	}
	return b.String()
}

// writeFile replaces a file atomically, as editors and kubectl-like tools
// do, so the watcher sees one complete version.
func writeFile(t testing.TB, dir, name, content string) {
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
