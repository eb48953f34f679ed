// Command checkbuilt fails when a link of the built documentation site
// does not resolve within it (see docsite.CheckBuilt); `make docs` runs it
// after MkDocs.
package main

import (
	"fmt"
	"os"

	"github.com/switchyard-dev/switchyard/internal/docsite"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: checkbuilt DIR")
		os.Exit(2)
	}
	problems, err := docsite.CheckBuilt(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkbuilt:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "checkbuilt: %d broken links in %s\n", len(problems), os.Args[1])
		os.Exit(1)
	}
}
