package main

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadVersion(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/switchyard-dev/switchyard", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "5bde028aa1"},
			{Key: "vcs.time", Value: "2026-12-01T21:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	v := readVersion(bi, true)
	if want := (versionInfo{Version: "v0.4.0", Commit: "5bde028aa1", Time: "2026-12-01T21:00:00Z", Modified: true, Go: "go1.26.8"}); v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}
	if got := v.String(); got != "switchyard v0.4.0 commit 5bde028aa1 (modified) from 2026-12-01T21:00:00Z, go1.26.8" {
		t.Errorf("text: %q", got)
	}
	// A plain `go build` in a checkout has no module version but a commit.
	bi.Main.Version = "(devel)"
	if v := readVersion(bi, true); v.Version != "devel" || v.Commit != "5bde028aa1" {
		t.Errorf("devel build: %+v", v)
	}
	if v := readVersion(nil, false); v.Version != "devel" || v.Commit != "" {
		t.Errorf("without build info: %+v", v)
	}
	// -X main.commit, for builds the toolchain cannot stamp, wins.
	defer func(c string) { commit = c }(commit)
	commit = "from-ldflags"
	if v := readVersion(bi, true); v.Commit != "from-ldflags" {
		t.Errorf("-X main.commit: %+v", v)
	}
}

func TestVersionCommand(t *testing.T) {
	out, _, code := run(t, "version")
	if code != 0 || !strings.HasPrefix(out, "switchyard ") {
		t.Fatalf("version: exit %d, %q", code, out)
	}
	out, _, code = run(t, "version", "-o", "json")
	var v versionInfo
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Version == "" {
		t.Fatalf("version -o json: exit %d, %q", code, out)
	}
	if _, _, code := run(t, "version", "-o", "xml"); code != 2 {
		t.Errorf("version -o xml: exit %d, want 2", code)
	}
}
