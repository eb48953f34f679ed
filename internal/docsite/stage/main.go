// Command stage copies the documentation into a directory MkDocs builds
// from (see package docsite); `make docs` runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/switchyard-dev/switchyard/internal/docsite"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	out := flag.String("out", "", "directory to write the staged pages to (emptied first)")
	repo := flag.String("repo-url", "https://github.com/switchyard-dev/switchyard", "where links that leave site/ point")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "stage: -out is required")
		os.Exit(2)
	}
	if err := os.RemoveAll(*out); err != nil {
		fmt.Fprintln(os.Stderr, "stage:", err)
		os.Exit(1)
	}
	if err := docsite.Stage(*root, *out, *repo); err != nil {
		fmt.Fprintln(os.Stderr, "stage:", err)
		os.Exit(1)
	}
}
