// Command switchyard is Switchyard's one binary: the control plane
// (serve), and the tools that share its code (render, version, ...).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries a process exit status out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// usageError marks an error in how the command was called (exit 2).
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "switchyard",
		Short:         "Switchyard: an Envoy ingress control plane for HTTPProxy and ExtensionService",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCommand(), newRenderCommand(), newVersionCommand())
	for _, c := range moreCommands {
		root.AddCommand(c())
	}
	return root
}

// moreCommands are added by the files that define them (in an init func),
// so that each command lives in its own file.
var moreCommands []func() *cobra.Command

func main() {
	err := newRootCommand().Execute()
	if err == nil {
		return
	}
	code := 2
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if ee == nil || ee.err != nil {
		fmt.Fprintln(os.Stderr, "switchyard:", err)
	}
	os.Exit(code)
}
