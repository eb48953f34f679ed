package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func newRenderCommand() *cobra.Command {
	var (
		source, output, group string
		opts                  render.Options
	)
	cmd := &cobra.Command{
		Use:   "render [--source DIR]",
		Short: "Print the xDS resources and object statuses a directory of manifests produces",
		Long: `render reads HTTPProxy, ExtensionService, TLSCertificateDelegation, Service,
EndpointSlice, Secret and Node manifests from a directory tree, builds exactly
what 'switchyard serve' would serve, and prints every xDS resource grouped by
type URL, then the status of every object. Private keys are redacted.

Exit status: 0 when every object is valid, 1 when some are invalid or some
documents could not be read (the output is still printed), 2 on usage or
I/O errors.`,
		Example: `  # Everything the quickstart configures for Envoy:
  switchyard render --source examples/quickstart

  # What a proxyless gRPC client would receive, as JSON:
  switchyard render --source examples/quickstart --group grpc -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, cleanup, err := defaultSource(source, cmd.ErrOrStderr())
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			defer cleanup()
			oneShotGC()
			snap, problems, err := dirsource.Load(dir)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if opts.Group, err = xdsres.ParseGroup(group); err != nil {
				return usageError("--group: %v", err)
			}
			out, err := render.Run(snap, opts)
			if err != nil {
				return usageError("%v", err)
			}
			for _, p := range problems {
				out.SourceProblems = append(out.SourceProblems, p.String())
			}
			out.NoDataPlane()
			b, err := out.Encode(output)
			if err != nil {
				return usageError("%v", err)
			}
			b = noteClaimRule(b, output, cmd.ErrOrStderr())
			if _, err := cmd.OutOrStdout().Write(b); err != nil {
				return &exitError{code: 2, err: err}
			}
			if !out.Valid() {
				return &exitError{code: 1, err: fmt.Errorf("some objects are not valid: see the statuses above")}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "", "directory of manifests to read (default: the embedded quickstart)")
	f.StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	f.StringVar(&group, "group", "envoy", "consumer group to render: "+strings.Join(xdsres.Names(), ", "))
	opts.Translator = translator.DefaultOptions()
	addBuildFlags(f, &opts.DAG, &opts.Translator)
	return cmd
}
