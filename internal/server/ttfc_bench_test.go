package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// BenchmarkTimeToFirstConfig is `serve --source DIR` from start to the
// first full CDS and LDS responses on an ADS stream that connected at
// start-up, on the directory of
// SWITCHYARD_BENCH_DIR (written by `switchyard gen`; `make bench` writes
// the shape of site/performance.md). The server logs at info level to a
// discarded text handler, so what it formats counts.
func BenchmarkTimeToFirstConfig(b *testing.B) {
	dir := os.Getenv("SWITCHYARD_BENCH_DIR")
	if dir == "" {
		b.Skip("SWITCHYARD_BENCH_DIR is not set: point it at a directory written by `switchyard gen`")
	}
	b.Run(filepath.Base(dir), func(b *testing.B) { benchFirstConfig(b, dir) })
}

func benchFirstConfig(b *testing.B, dir string) {
	cpu := perf.StartCPU()
	n, clusters := 0, 0
	for b.Loop() {
		clusters = firstConfig(b, dir)
		n++
	}
	cpu.Report(b, n)
	b.ReportMetric(float64(clusters), "clusters")
}

func firstConfig(b *testing.B, dir string) int {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return untilFirstConfig(b, &server.DirSource{Root: dir, Log: log}, log)[resource.ClusterType]
}

// envoyWindows dials with the HTTP/2 flow-control windows Envoy advertises
// by default (256 MiB for a stream and for the connection), instead of
// grpc-go's 64 KiB that grow with the measured bandwidth-delay product: a
// response of several megabytes then arrives as Envoy would take it, not
// in window-sized steps that wait on a busy receiver.
var envoyWindows = []grpc.DialOption{
	grpc.WithTransportCredentials(insecure.NewCredentials()),
	grpc.WithInitialWindowSize(256 << 20),
	grpc.WithInitialConnWindowSize(256 << 20),
}

// untilFirstConfig runs a control plane, as serve does, on src until an
// ADS stream connected from the start has its first CDS and LDS
// responses, and returns how many resources of each they hold.
func untilFirstConfig(b *testing.B, src server.Source, log *slog.Logger) map[string]int {
	cfg := server.Config{XDSAddress: "127.0.0.1:0", Holdoff: server.DefaultHoldoff, MaxWait: server.DefaultMaxWait, Log: log}
	cfg.Pipeline.Translator = translator.DefaultOptions()
	s := server.New(cfg)
	addr, err := s.ListenXDS()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, src) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("control plane: %v", err)
		}
	}()
	return firstResponses(ctx, b, addr)
}

// firstResponses connects to the xDS port at once, as an Envoy started
// with the control plane does, asks for every cluster and listener on one
// ADS stream and returns how many of each the first responses hold, once
// both have come. At 10,000 roots a response is several megabytes, over
// gRPC's default limit of 4.
func firstResponses(ctx context.Context, b *testing.B, addr net.Addr) map[string]int {
	st, err := envoy_service_discovery_v3.NewAggregatedDiscoveryServiceClient(dialXDS(b, addr.String(), envoyWindows...)).StreamAggregatedResources(ctx, grpc.WaitForReady(true), grpc.MaxCallRecvMsgSize(1<<30))
	if err != nil {
		b.Fatal(err)
	}
	for _, typ := range []string{resource.ClusterType, resource.ListenerType} {
		if err := st.Send(&envoy_service_discovery_v3.DiscoveryRequest{Node: envoyNode, TypeUrl: typ}); err != nil {
			b.Fatal(err)
		}
	}
	got := map[string]int{}
	for len(got) < 2 {
		resp, err := st.Recv()
		if err != nil {
			b.Fatal(err)
		}
		got[resp.GetTypeUrl()] = len(resp.GetResources())
	}
	if got[resource.ClusterType] == 0 || got[resource.ListenerType] == 0 {
		b.Fatalf("first responses hold %v resources by type", got)
	}
	return got
}
