package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/internal/convert"
)

func init() { moreCommands = append(moreCommands, newConvertCommand) }

func newConvertCommand() *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:   "convert [FILE|DIR|-]...",
		Short: "Rewrite Contour manifests as Switchyard ones",
		Long: `convert reads Contour manifests (files, directory trees of .yaml/.yml files,
or standard input when no path or "-" is given) and writes them as
switchyard.dev objects: projectcontour.io/v1 becomes switchyard.dev/v1 (and
v1alpha1 likewise), projectcontour.io/ annotations become switchyard.dev/
ones, status is dropped, and the few fields whose meaning differs are
rewritten to keep Contour's behaviour. Every field Switchyard does not have
is left out and listed on standard error with its file and line; see
site/migration.md.

Without --output-dir the converted documents go to standard output, each
file's preceded by a "# Source:" comment. With it, each input file is
written under DIR at its path relative to the argument it was found under.

Exit status: 0 when everything was carried over as it was, 1 when something
was left out or rewritten (the output is still written), 2 on usage or I/O
errors.`,
		Example: `  switchyard convert contour-manifests/ > switchyard-manifests.yaml
  kubectl get httpproxies -A -o yaml | switchyard convert | kubectl apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			warned, err := runConvert(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, outDir)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if warned {
				return &exitError{code: 1, err: fmt.Errorf("some fields were left out or rewritten: see the warnings above")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&outDir, "output-dir", "", "write each converted file under this directory instead of to standard output")
	return cmd
}

// runConvert converts every input and reports whether anything was
// warned about.
func runConvert(stdin io.Reader, stdout, stderr io.Writer, args []string, outDir string) (bool, error) {
	if len(args) == 0 || (len(args) == 1 && args[0] == "-") {
		if outDir != "" {
			return false, fmt.Errorf("--output-dir needs file or directory arguments")
		}
		return convertOne("<stdin>", stdin, stdout, stderr)
	}
	warned := false
	for _, arg := range args {
		files, err := convert.Files([]string{arg})
		if err != nil {
			return warned, err
		}
		for _, f := range files {
			w, err := convertFile(arg, f, stdout, stderr, outDir)
			if err != nil {
				return warned, err
			}
			warned = warned || w
		}
	}
	return warned, nil
}

func convertFile(root, file string, stdout, stderr io.Writer, outDir string) (bool, error) {
	in, err := os.Open(file)
	if err != nil {
		return false, err
	}
	defer in.Close()
	if outDir == "" {
		fmt.Fprintf(stdout, "---\n# Source: %s\n", filepath.ToSlash(file))
		return convertOne(file, in, stdout, stderr)
	}
	rel, err := filepath.Rel(root, file)
	if err != nil || rel == "." {
		rel = filepath.Base(file)
	}
	var buf bytes.Buffer
	warned, err := convertOne(file, in, &buf, stderr)
	if err != nil {
		return warned, err
	}
	dst := filepath.Join(outDir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return warned, err
	}
	return warned, os.WriteFile(dst, buf.Bytes(), 0o644)
}

func convertOne(name string, in io.Reader, out, stderr io.Writer) (bool, error) {
	b, warnings, err := convert.Convert(filepath.ToSlash(name), in)
	for _, w := range warnings {
		fmt.Fprintln(stderr, w)
	}
	if err != nil {
		return len(warnings) > 0, err
	}
	_, err = out.Write(b)
	return len(warnings) > 0, err
}
