package xdsload

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"google.golang.org/grpc"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/pipeline"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// server is a control plane on loopback serving a generated set.
type server struct {
	pipe *pipeline.Pipeline
	addr string
	// shared is the host every stream follows; slice is the EndpointSlice
	// of its first Service and cla the load assignment it feeds.
	shared string
	slice  *discoveryv1.EndpointSlice
	cla    string
	// hosts are the other hosts gRPC clients can follow.
	hosts []string
}

func serve(tb testing.TB, proxies int) *server {
	tb.Helper()
	cfg := scalegen.Defaults()
	cfg.Proxies = proxies
	set, err := scalegen.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	cache := xdscache.New()
	p := pipeline.New(cache, pipeline.Config{Translator: translator.DefaultOptions()})
	if _, err := p.Apply(set.Changes()); err != nil {
		tb.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gs := grpc.NewServer()
	xdscache.Register(ctx, gs, cache, xdscache.NewMetrics(nil), slog.New(slog.NewTextHandler(io.Discard, nil)))
	go func() { _ = gs.Serve(lis) }()
	tb.Cleanup(func() {
		cancel()
		gs.Stop()
	})
	s := &server{pipe: p, addr: lis.Addr().String()}
	for _, o := range set.Objects {
		hp, ok := o.(*switchyardv1.HTTPProxy)
		// gRPC clients get no cluster behind authorization.
		if !ok || hp.Spec.VirtualHost == nil || hp.Spec.VirtualHost.Authorization != nil {
			continue
		}
		if s.shared == "" {
			s.shared = hp.Spec.VirtualHost.Fqdn
			s.slice, s.cla = sliceOf(tb, set, p, types.NamespacedName{Namespace: hp.Namespace, Name: hp.Spec.Routes[0].Services[0].Name})
			continue
		}
		s.hosts = append(s.hosts, hp.Spec.VirtualHost.Fqdn)
	}
	return s
}

// sliceOf finds a Service's EndpointSlice and the cluster it feeds.
func sliceOf(tb testing.TB, set *scalegen.Set, p *pipeline.Pipeline, svc types.NamespacedName) (*discoveryv1.EndpointSlice, string) {
	tb.Helper()
	var es *discoveryv1.EndpointSlice
	for _, o := range set.Objects {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			if owner, _ := objects.SliceService(objects.CompactSlice(s)); owner == svc {
				es = s
			}
		}
	}
	for _, c := range p.DAG().Clusters {
		if len(c.Spec.Backends) == 1 && c.Spec.Backends[0].Service == svc {
			return es, c.Name
		}
	}
	tb.Fatalf("no cluster reads %s", svc)
	return nil, ""
}

// listeners gives stream i the shared host and one of its own.
func (s *server) listeners(i int) []string {
	return []string{s.shared, s.hosts[i%len(s.hosts)]}
}

// flip changes the readiness of the shared host's first endpoint.
func (s *server) flip(tb testing.TB, ready bool) {
	tb.Helper()
	next := s.slice.DeepCopy()
	next.Endpoints[0].Conditions.Ready = &ready
	s.slice = next
	if _, err := s.pipe.Apply([]objects.Change{{Key: objects.NewKey(objects.KindEndpointSlice, types.NamespacedName{Namespace: next.Namespace, Name: next.Name}), Object: next}}); err != nil {
		tb.Fatal(err)
	}
}
