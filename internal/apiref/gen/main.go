// Command gen writes the API reference (see package apiref); `make
// apidocs` runs it from the repository's root.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchyard-dev/switchyard/internal/apiref"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	out := flag.String("out", apiref.Page, "file to write, relative to the root")
	flag.Parse()
	b, err := apiref.Generate(*root)
	if err == nil {
		err = os.WriteFile(filepath.Join(*root, *out), b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiref:", err)
		os.Exit(1)
	}
}
