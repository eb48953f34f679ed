package main

import (
	"fmt"
	"io"
	"os"

	"github.com/switchyard-dev/switchyard/examples"
)

// defaultSource returns the directory to read: the one given, or a copy of
// the embedded quickstart when none was. cleanup removes the copy.
func defaultSource(source string, note io.Writer) (dir string, cleanup func(), err error) {
	if source != "" {
		return source, func() {}, nil
	}
	dir, err = os.MkdirTemp("", "switchyard-quickstart-")
	if err != nil {
		return "", nil, fmt.Errorf("creating a directory for the embedded quickstart: %w (give --source DIR instead)", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	if err := examples.WriteQuickstart(dir); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("writing the embedded quickstart: %w (give --source DIR instead)", err)
	}
	fmt.Fprintf(note, "switchyard: no --source given, using the embedded quickstart (the manifests of examples/quickstart) copied to %s\n", dir)
	return dir, cleanup, nil
}
