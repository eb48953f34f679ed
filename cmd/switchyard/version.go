package main

import (
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are set with -ldflags "-X main.version=... -X
// main.commit=..." by release builds, and by builds where the toolchain
// cannot stamp the commit itself (-buildvcs=false, a tarball).
var version, commit = "", ""

// versionInfo is what `version` prints: the module version and the commit
// it was built from, as the Go toolchain stamps them into the binary.
type versionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	// Time is the commit's time, RFC 3339.
	Time string `json:"time,omitempty"`
	// Modified says the working tree had uncommitted changes.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go,omitempty"`
}

// readVersion reads the version from build info: -X main.version wins,
// else the module version (set by `go install module@version`), else
// "devel"; the commit comes from the vcs.* settings `go build` records in
// a checkout.
func readVersion(bi *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Version: version, Commit: commit}
	if ok {
		v.Go = bi.GoVersion
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if v.Commit == "" {
					v.Commit = s.Value
				}
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	return v
}

func (v versionInfo) String() string {
	s := "switchyard " + v.Version
	if v.Commit != "" {
		s += " commit " + v.Commit
		if v.Modified {
			s += " (modified)"
		}
		if v.Time != "" {
			s += " from " + v.Time
		}
	}
	if v.Go != "" {
		s += ", " + v.Go
	}
	return s
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of this binary and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := readVersion(debug.ReadBuildInfo())
			switch output {
			case "text":
				_, err := fmt.Fprintln(cmd.OutOrStdout(), v)
				return err
			case "json":
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
				return err
			}
			return usageError("-o %q: use text or json", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
