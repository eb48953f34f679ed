package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/internal/scalegen"
)

func init() { moreCommands = append(moreCommands, newGenCommand) }

func newGenCommand() *cobra.Command {
	var (
		cfg   = scalegen.Defaults()
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "gen --out DIR",
		Short: "Write a realistic manifest tree of a given size, for capacity planning",
		Long: `gen writes HTTPProxies, Services, EndpointSlices, Secrets, a
TLSCertificateDelegation and ExtensionServices to DIR, one file per
namespace, as 'switchyard serve --source DIR' and 'render' read them.

Proxies are grouped in team namespaces. Every fifth proxy (or --included
of them, spread evenly) is a team proxy without a host name that a root
includes, half of them from another namespace. Each route forwards to its own Services (weighted when there are
several), with named ports, and each Service has one EndpointSlice spread
over the zones, every tenth endpoint terminating. --tls-fraction of the
roots terminate TLS with their team's certificate or, for a quarter of them,
a delegated one; a tenth of those check requests with an ExtensionService.
Every object it writes is valid. One TLS key pair is generated per run and
shared by every Secret; everything else is determined by the flags and
--seed.`,
		Example: `  # 10,000 proxies, 100,000 endpoints:
  switchyard gen --proxies 10000 --out /tmp/scale
  switchyard render --source /tmp/scale > /dev/null

  # The shape of site/performance.md's directory benchmarks: 10,000 roots
  # and 1,000 included proxies, 2 routes of 3 weighted Services, 3
  # endpoints in 2 zones each, half of the hosts TLS:
  switchyard gen --proxies 11000 --included 1000 --routes-per-proxy 2 \
    --services-per-route 3 --endpoints-per-service 3 --zones 2 \
    --tls-fraction 0.5 --out /tmp/scale`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageError("--out is required")
			}
			if err := cfg.Validate(); err != nil {
				return usageError("%v", err)
			}
			if err := checkEmptyDir(out, force); err != nil {
				return err
			}
			set, err := scalegen.Generate(cfg)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if err := set.Write(out); err != nil {
				return &exitError{code: 2, err: err}
			}
			_, err = fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d objects in %d namespaces to %s\n", len(set.Objects), len(set.Namespaces), out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "directory to write the manifests to (created if needed; must be empty unless --force)")
	f.BoolVar(&force, "force", false, "write into --out even if it is not empty (files of the same names are replaced, others stay)")
	f.IntVar(&cfg.Proxies, "proxies", cfg.Proxies, "HTTPProxies in all, roots and included team proxies")
	f.IntVar(&cfg.Included, "included", cfg.Included, "how many of the proxies are included by a root rather than roots (0: one in five; at most half)")
	f.IntVar(&cfg.RoutesPerProxy, "routes-per-proxy", cfg.RoutesPerProxy, "routes of each proxy")
	f.IntVar(&cfg.ServicesPerRoute, "services-per-route", cfg.ServicesPerRoute, "Services each route forwards to")
	f.IntVar(&cfg.EndpointsPerService, "endpoints-per-service", cfg.EndpointsPerService, "endpoints of each Service")
	f.IntVar(&cfg.Zones, "zones", cfg.Zones, "zones the endpoints of a Service are spread over")
	f.Float64Var(&cfg.TLSFraction, "tls-fraction", cfg.TLSFraction, "fraction of the roots that terminate TLS (0-1)")
	f.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the choices of TLS and authorization")
	f.IntVar(&cfg.TeamSize, "team-size", scalegen.DefaultTeamSize, "proxies per team namespace")
	return cmd
}

// checkEmptyDir refuses a directory that holds anything unless forced:
// the files gen writes would mix with what is there, and serve or render
// would then read both.
func checkEmptyDir(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &exitError{code: 2, err: err}
	case len(entries) > 0 && !force:
		return usageError("--out %s is not empty (%d entries): choose an empty directory, or give --force to write into it", dir, len(entries))
	}
	return nil
}
