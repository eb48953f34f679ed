package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderMeshKeepsSelectors requires render --mesh to read Services
// with their selectors: a TrafficTarget's destination is the pods a
// Service selects, so without the selector the target's policy is empty.
// Without --mesh the source drops selectors, which nothing else reads.
func TestRenderMeshKeepsSelectors(t *testing.T) {
	input, err := os.ReadFile("../../internal/translator/testdata/mesh-target/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input.yaml"), input, 0o600); err != nil {
		t.Fatal(err)
	}
	// Exit 1: one of the targets names a route group that is not there.
	out, errOut, code := run(t, "render", "--source", dir, "--mesh", "--group", "mesh")
	if code > 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "address_prefix: 10.3.0.1") {
		t.Errorf("render --mesh: no principal for the pods reviews' selector finds:\n%s", out)
	}
}
