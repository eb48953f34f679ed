package main

import (
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

func newServeCommand() *cobra.Command {
	var (
		source    string
		logLevel  string
		logFormat string
		cfg       = server.Config{
			XDSAddress:   "127.0.0.1:8001",
			AdminAddress: "127.0.0.1:8000",
			Holdoff:      server.DefaultHoldoff,
			MaxWait:      server.DefaultMaxWait,
		}
	)
	cfg.Pipeline.Translator = translator.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "serve [--source DIR]",
		Short: "Run the control plane: serve xDS to Envoy, gRPC clients and DNS balancers",
		Long: `serve builds the configuration from a directory of manifests and serves it
over xDS (ADS and the per-type services, state-of-the-world and delta) to
three kinds of client, told apart by node metadata switchyard.dev/group,
else user agent, else node id: Envoy proxies, proxyless gRPC clients and
DNS balancers. It follows edits to the directory, coalescing bursts. The
xDS port opens at once, so clients connect while the source is read, but
nothing is answered before the first full build is in: a restarted
control plane never serves an empty configuration.

With --kubeconfig, or by default in a pod, it reads the objects from the
Kubernetes API server instead, and writes their status back; of several
replicas, all serve xDS and the one holding the leader Lease writes status.

With --etcd-endpoints it reads them from etcd, one key per object under
--etcd-prefix (see site/etcd.md), and writes status under
<prefix>status/; replicas sharing a prefix serve the same versions, and
the one holding an etcd lease writes status.

The admin endpoint serves /healthz, /readyz, /metrics, /debug/dag,
/debug/xds?group=envoy|grpc|dns and /debug/pprof/.

Memory: while it reads a --source directory and makes the first build,
serve runs the garbage collector at GOGC=400, then at Go's default of 100;
setting GOGC in the environment turns this off. It does not set
GOMEMLIMIT: in a container, set it to about 90% of the memory limit, and
the collector works harder near it instead of the process being killed.`,
		Example: `  # Serve the quickstart to an Envoy on this machine:
  switchyard serve --source examples/quickstart

  # Look at what a proxyless gRPC client receives:
  curl -s 'http://127.0.0.1:8000/debug/xds?group=grpc'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			inEtcd, err := useEtcd(source)
			if err != nil {
				return err
			}
			inKube := false
			if !inEtcd {
				if inKube, err = useKube(source); err != nil {
					return err
				}
			}
			dir, cleanup := "", func() {}
			if !inKube && !inEtcd {
				if dir, cleanup, err = defaultSource(source, cmd.ErrOrStderr()); err != nil {
					return &exitError{code: 2, err: err}
				}
			}
			defer cleanup()
			log, err := newLogger(cmd.ErrOrStderr(), logLevel, logFormat)
			if err != nil {
				return err
			}
			cfg.Log = log
			for _, check := range serveChecks {
				if err := check(cmd.Flags(), &cfg); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if inKube {
				return serveKube(ctx, cfg, log)
			}
			if inEtcd {
				return serveEtcd(ctx, cfg, log)
			}
			s := server.New(cfg)
			if err := s.Run(ctx, withStartupGC(&server.DirSource{Root: dir, Log: log, WithoutMesh: !cfg.Pipeline.DAG.Mesh})); err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "", "directory of manifests to serve, followed as it changes (default: the embedded quickstart)")
	f.StringVar(&cfg.XDSAddress, "xds-address", cfg.XDSAddress, "host:port of the xDS gRPC server")
	f.StringVar(&cfg.AdminAddress, "admin-address", cfg.AdminAddress, "host:port of the admin endpoint (health, metrics, debug)")
	f.DurationVar(&cfg.Holdoff, "holdoff", cfg.Holdoff, "wait this long after a change for more before building")
	f.DurationVar(&cfg.MaxWait, "max-wait", cfg.MaxWait, "build at most this long after the first of a burst of changes")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&logFormat, "log-format", "text", "text (key=value) or json (one object per line, for log collectors)")
	addBuildFlags(f, &cfg.Pipeline.DAG, &cfg.Pipeline.Translator)
	for _, add := range serveFlags {
		add(f, &cfg)
	}
	return cmd
}

// serveFlags register more of serve's flags; the files that define them
// append here in an init func, so each concern keeps its flags with its
// code.
var serveFlags []func(*pflag.FlagSet, *server.Config)

// serveChecks run once serve's flags are parsed, before anything starts:
// the files that register flags needing a check, or files to load, append
// here in an init func too, and read their flags back from the set. An
// error stops serve (use usageError for a wrong combination of flags).
var serveChecks []func(*pflag.FlagSet, *server.Config) error

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError("--log-format %q: use text or json", format)
}
