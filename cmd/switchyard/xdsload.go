package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/xdsload"
)

func init() { moreCommands = append(moreCommands, newXDSLoadCommand) }

// newXDSLoadCommand is the load client of internal/xdsload as a command,
// hidden: it is for load-testing a running control plane, not for users.
func newXDSLoadCommand() *cobra.Command {
	var (
		cfg       xdsload.Config
		listeners string
		hold      time.Duration
		timeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:    "xdsload --target HOST:PORT --listeners NAME[,NAME...]",
		Short:  "Open many delta ADS streams against a control plane, as proxyless gRPC clients, and report their sync",
		Hidden: true,
		Long: `xdsload opens --streams delta ADS streams to --target, each a proxyless gRPC
client following the listeners named in --listeners (stream i follows the
i-th name modulo their number) to their route configurations, clusters and
load assignments. It prints how long the streams took to receive everything
they follow, then keeps them open for --hold (until interrupted when 0).`,
		Example: `  switchyard gen --proxies 10000 --out /tmp/scale
  switchyard serve --source /tmp/scale &
  switchyard xdsload --target 127.0.0.1:8001 --streams 1000 \
    --listeners app-0.team-0.example.com,app-1.team-0.example.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names := strings.Split(listeners, ",")
			if cfg.Target == "" || listeners == "" || cfg.Streams < 1 {
				return usageError("--target, --listeners and --streams (at least 1) are required")
			}
			cfg.Listeners = func(i int) []string { return []string{names[i%len(names)]} }
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			syncCtx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			c, err := xdsload.Start(syncCtx, cfg)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer c.Stop()
			synced, err := c.WaitSynced(syncCtx)
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("waiting for the streams to sync: %w", err)}
			}
			l := perf.Latencies(synced)
			fmt.Fprintf(cmd.OutOrStdout(), "%d streams synced in %v; per stream p50 %v, p99 %v\n",
				len(synced), time.Since(start).Round(time.Millisecond), l.Percentile(50).Round(time.Microsecond), l.Percentile(99).Round(time.Microsecond))
			if hold > 0 {
				select {
				case <-time.After(hold):
				case <-ctx.Done():
				}
			} else {
				<-ctx.Done()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Target, "target", "", "the control plane's xDS address, host:port")
	f.IntVar(&cfg.Streams, "streams", 100, "ADS streams to open")
	f.IntVar(&cfg.StreamsPerConn, "streams-per-conn", 10, "streams sharing one connection")
	f.StringVar(&cfg.Group, "group", "grpc", "consumer group the streams claim (node metadata)")
	f.StringVar(&listeners, "listeners", "", "comma-separated listener names (grpc group: host names) the streams follow")
	f.DurationVar(&hold, "hold", 0, "how long to keep the streams open after they synced; 0 until interrupted")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long the streams may take to sync")
	return cmd
}
