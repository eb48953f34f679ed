// Command authz is a small external authorization server for Switchyard:
// it implements Envoy's envoy.service.auth.v3.Authorization/Check, which
// Envoy's ext_authz filter calls for every request of a virtual host whose
// HTTPProxy sets virtualhost.authorization.
//
// A request is allowed when it carries a header named by an --allow-header
// rule with the rule's exact value, or an "Authorization: Bearer <token>"
// header with a token listed in the --tokens file (re-read when it
// changes). Otherwise it is denied: 401 without usable credentials, 403
// with a token that is not listed, with the reason in the body and in the
// x-authz-denied header. Every answer echoes the check's context
// extensions in x-authz-context, for debugging authPolicy.context.
//
// It serves plaintext HTTP/2 (ExtensionService protocol h2c) unless given
// --tls-cert and --tls-key (protocol h2 or tls). See site/authorization.md.
//
//	go run ./examples/authz --tokens examples/authz/tokens.txt --allow-header x-api-key=demo
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	envoy_service_auth_v3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// config is the parsed command line.
type config struct {
	listen  string
	tokens  string
	reload  time.Duration
	headers []HeaderRule
	tlsCert string
	tlsKey  string
}

// headerRules collects repeated --allow-header flags.
type headerRules []HeaderRule

func (h *headerRules) String() string {
	parts := make([]string, 0, len(*h))
	for _, r := range *h {
		parts = append(parts, r.Name+"=…")
	}
	return strings.Join(parts, ",")
}

func (h *headerRules) Set(s string) error {
	r, err := ParseHeaderRule(s)
	if err != nil {
		return err
	}
	*h = append(*h, r)
	return nil
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("authz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:9001", "address to serve gRPC on")
	fs.StringVar(&cfg.tokens, "tokens", "", "file of accepted bearer tokens, one per line, each optionally followed by a name")
	fs.DurationVar(&cfg.reload, "reload", 5*time.Second, "how often to re-read the tokens file (0: read it once)")
	fs.Var((*headerRules)(&cfg.headers), "allow-header", "allow requests whose header NAME has exactly VALUE, as NAME=VALUE (repeatable)")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "PEM certificate: serve TLS (ExtensionService protocol h2 or tls) instead of plaintext h2c")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.tokens == "" && len(cfg.headers) == 0:
		return cfg, errors.New("nothing would ever be allowed: give --tokens, --allow-header or both")
	case (cfg.tlsCert == "") != (cfg.tlsKey == ""):
		return cfg, errors.New("--tls-cert and --tls-key go together")
	case cfg.reload < 0:
		return cfg, errors.New("--reload must not be negative")
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lis, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		log.Error("listen", "error", err)
		return 1
	}
	if err := serve(ctx, lis, cfg, log); err != nil {
		log.Error("serve", "error", err)
		return 1
	}
	return 0
}

// serve runs the authorization server on lis until ctx ends, then stops
// gracefully: checks in flight are answered.
func serve(ctx context.Context, lis net.Listener, cfg config, log *slog.Logger) error {
	auth := &Authorizer{Headers: cfg.headers, Log: log}
	if cfg.tokens != "" {
		tf, err := LoadTokenFile(cfg.tokens)
		if err != nil {
			return err
		}
		auth.Tokens = tf
		if cfg.reload > 0 {
			go tf.Watch(ctx, cfg.reload, log)
		}
	}
	var opts []grpc.ServerOption
	if cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return fmt.Errorf("TLS key pair: %w", err)
		}
		// credentials.NewTLS offers ALPN h2, which Envoy's h2 clusters ask for.
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})))
	}
	gs := grpc.NewServer(opts...)
	envoy_service_auth_v3.RegisterAuthorizationServer(gs, auth)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	go func() {
		<-ctx.Done()
		hs.Shutdown()
		gs.GracefulStop()
	}()
	log.Info("serving envoy.service.auth.v3.Authorization", "address", lis.Addr().String(), "tls", cfg.tlsCert != "", "headerRules", len(cfg.headers), "tokensFile", cfg.tokens)
	return gs.Serve(lis)
}
