package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// gatedSource is a source whose first read waits for release.
type gatedSource struct {
	server.Source
	release chan struct{}
}

func (g *gatedSource) Start(ctx context.Context) ([]objects.Change, error) {
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Source.Start(ctx)
}

// TestClientsConnectBeforeTheFirstBuild: the xDS port is open while the
// source is still reading, nothing is served yet, and gRPC's own xDS
// client, connected then, routes its first RPC once the first build is in.
func TestClientsConnectBeforeTheFirstBuild(t *testing.T) {
	dir, _, ids := weightedSetup(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := server.Config{XDSAddress: "127.0.0.1:0", Log: log}
	cfg.Pipeline.Translator = translator.DefaultOptions()
	s := server.New(cfg)
	addr, err := s.ListenXDS()
	if err != nil {
		t.Fatal(err)
	}
	src := &gatedSource{Source: &server.DirSource{Root: dir, Log: log}, release: make(chan struct{})}
	runSource(t, s, src)

	conn, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	if err != nil {
		t.Fatalf("the xDS port is not open while the source reads: %v", err)
	}
	conn.Close()
	if s.XDSAddr() != nil {
		t.Fatal("XDSAddr is set before the first build")
	}
	c := grpcClientAt(t, addr, "app.example.com")
	answered := make(chan error, 1)
	go func() {
		rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer rcancel()
		_, err := c.UnaryCall(rctx, &testgrpc.SimpleRequest{}, grpc.WaitForReady(true))
		answered <- err
	}()
	close(src.release)
	if err := <-answered; err != nil {
		t.Fatalf("a client that connected before the first build: %v", err)
	}
	if s.XDSAddr() == nil || s.XDSAddr().String() != addr.String() {
		t.Errorf("XDSAddr %v once serving, want %v", s.XDSAddr(), addr)
	}
	warmUp(t, c, ids...)
}
