// Command ratelimit is a small global rate limit service for Switchyard:
// it implements Envoy's envoy.service.ratelimit.v3.RateLimitService/
// ShouldRateLimit, which Envoy's ratelimit filter calls with the
// descriptors of an HTTPProxy's rateLimitPolicy.global, once Switchyard is
// started with --rate-limit-service naming its ExtensionService.
//
// The limits come from a file (see ReadLimits and limits.txt): a domain,
// the descriptor's entries, and requests per second, minute, hour or day,
// counted in fixed windows. One process counts for every Envoy that asks
// it; the counts are in memory, so a restart forgets them. It serves
// plaintext HTTP/2 (ExtensionService protocol h2c). See
// site/rate-limiting.md.
//
//	go run ./examples/ratelimit --limits examples/ratelimit/limits.txt
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	envoy_service_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// config is the parsed command line.
type config struct {
	listen string
	limits string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("ratelimit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:8081", "address to serve gRPC on")
	fs.StringVar(&cfg.limits, "limits", "", "file of limits, one a line: DOMAIN KEY[=VALUE],... REQUESTS/UNIT")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.limits == "":
		return cfg, errors.New("--limits is required: without limits nothing would ever be limited")
	}
	return cfg, nil
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run is main with an exit status: 2 for a bad command line, 1 when the
// server cannot start.
func run(args []string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := parseFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		log.Error("bad command line", "error", err)
		return 2
	}
	rules, err := ReadLimits(cfg.limits)
	if err != nil {
		log.Error("limits", "file", cfg.limits, "error", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lis, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		log.Error("listen", "error", err)
		return 1
	}
	if err := serve(ctx, lis, NewServer(rules, log), log); err != nil {
		log.Error("serve", "error", err)
		return 1
	}
	return 0
}

// serve runs srv on lis until ctx ends, then stops gracefully: calls in
// flight are answered.
func serve(ctx context.Context, lis net.Listener, srv *Server, log *slog.Logger) error {
	gs := grpc.NewServer()
	envoy_service_ratelimit_v3.RegisterRateLimitServiceServer(gs, srv)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	go func() {
		<-ctx.Done()
		hs.Shutdown()
		gs.GracefulStop()
	}()
	log.Info("serving envoy.service.ratelimit.v3.RateLimitService", "address", lis.Addr().String(), "rules", len(srv.rules))
	return gs.Serve(lis)
}
