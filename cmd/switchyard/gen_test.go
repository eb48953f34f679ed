package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenRendersValid writes a small tree with gen and renders it: render
// exits 0 only when every object is valid and every document was read.
func TestGenRendersValid(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := run(t, "gen", "--proxies", "40", "--routes-per-proxy", "3", "--services-per-route", "2",
		"--endpoints-per-service", "4", "--zones", "2", "--tls-fraction", "0.7", "--seed", "3", "--out", dir); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errOut)
	}
	for _, group := range []string{"envoy", "grpc", "dns"} {
		if _, errOut, code := run(t, "render", "--source", dir, "--group", group); code != 0 {
			t.Errorf("render --group %s: exit %d: %s", group, code, errOut)
		}
	}
}

func TestGenUsage(t *testing.T) {
	if _, _, code := run(t, "gen", "--proxies", "10"); code != 2 {
		t.Errorf("gen without --out: exit %d, want 2", code)
	}
	if _, _, code := run(t, "gen", "--tls-fraction", "2", "--out", t.TempDir()); code != 2 {
		t.Errorf("gen --tls-fraction 2: exit %d, want 2", code)
	}
}

// TestGenRefusesNonEmptyDir: gen never mixes its files into a directory
// that holds something already, unless told to.
func TestGenRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(keep, []byte("# not gen's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	small := []string{"gen", "--proxies", "5", "--out", dir}
	if _, errOut, code := run(t, small...); code != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("non-empty --out: exit %d, %q; want 2 and a word about --force", code, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a refused gen wrote %d entries", len(entries)-1)
	}
	if _, errOut, code := run(t, append(small, "--force")...); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) < 2 {
		t.Errorf("--force wrote nothing")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("--force removed a file gen did not write: %v", err)
	}
}

func TestXDSLoadUsage(t *testing.T) {
	if _, _, code := run(t, "xdsload", "--streams", "3"); code != 2 {
		t.Errorf("xdsload without --target: exit %d, want 2", code)
	}
}
