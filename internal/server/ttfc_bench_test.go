package server_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// BenchmarkTimeToFirstConfig is `serve --source DIR` from start to the
// first full CDS response on an ADS stream, on the directory of
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
	cfg := server.Config{
		XDSAddress: "127.0.0.1:0",
		Holdoff:    server.DefaultHoldoff,
		MaxWait:    server.DefaultMaxWait,
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	cfg.Pipeline.Translator = translator.DefaultOptions()
	s := server.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, &server.DirSource{Root: dir, Log: cfg.Log}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("control plane: %v", err)
		}
	}()
	// The server listens only once the first build is in its cache.
	for s.XDSAddr() == nil {
		select {
		case err := <-done:
			b.Fatalf("control plane ended before serving: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	resp, err := sotwOnce(ctx, dialXDS(b, s.XDSAddr().String()), envoyNode, resource.ClusterType, 5*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	if len(resp.GetResources()) == 0 {
		b.Fatal("first response holds no clusters")
	}
	return len(resp.GetResources())
}
