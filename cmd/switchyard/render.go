package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func newRenderCommand() *cobra.Command {
	var (
		source, output, group string
		strict                bool
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
I/O errors. Documents of kinds Switchyard does not read (a Deployment in a
shared directory) are noted on standard error and skipped, unless --strict.`,
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
			snap, problems, err := dirsource.Load(dir, dirsource.Mesh(opts.DAG.Mesh))
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if opts.Group, err = xdsres.ParseGroup(group); err != nil {
				return usageError("--group: %v", err)
			}
			if output != "" && output != "yaml" && output != "json" {
				return usageError("unknown output format %q: use yaml or json", output)
			}
			opts.Encoded = true // printed only: decoded as it is printed
			out, err := render.Run(snap, opts)
			if err != nil {
				return usageError("%v", err)
			}
			for _, p := range problems {
				if p.Severity == dirsource.Warning && !strict {
					// A kind Switchyard does not read, in a directory
					// shared with other tools: noted, not a failure.
					fmt.Fprintf(cmd.ErrOrStderr(), "switchyard: note: %s\n", p)
					continue
				}
				out.SourceProblems = append(out.SourceProblems, p.String())
			}
			out.NoDataPlane()
			// Printed as it is made: the document of 10,000 proxies is
			// hundreds of megabytes that need not be held at once.
			if err := out.EncodeTo(cmd.OutOrStdout(), output, render.EncodeOptions{StatusesNote: claimNote(output, cmd.ErrOrStderr())}); err != nil {
				return &exitError{code: 2, err: err}
			}
			if !out.Valid() {
				return &exitError{code: 1, err: invalidSummary(out)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "", "directory of manifests to read (default: the embedded quickstart)")
	f.BoolVar(&strict, "strict", false, "fail (exit 1) on documents of kinds Switchyard does not read, which are otherwise noted on standard error and skipped")
	f.StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	f.StringVar(&group, "group", "envoy", "consumer group to render: "+strings.Join(xdsres.Names(), ", "))
	opts.Translator = translator.DefaultOptions()
	addBuildFlags(f, &opts.DAG, &opts.Translator)
	return cmd
}

// invalidSummary says why render exits 1, in words that hold wherever the
// output went: how many objects are invalid and how many documents could
// not be read, and where in the output each is listed.
func invalidSummary(out *render.Output) error {
	var parts []string
	invalid := 0
	for _, st := range out.Statuses {
		if st.State != switchyardv1.StatusValid {
			invalid++
		}
	}
	if invalid > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d objects are not valid (each one's status is in the output, under statuses)", invalid, len(out.Statuses)))
	}
	if n := len(out.SourceProblems); n > 0 {
		parts = append(parts, fmt.Sprintf("%d documents could not be read (listed in the output, under sourceProblems)", n))
	}
	return errors.New(strings.Join(parts, "; "))
}
