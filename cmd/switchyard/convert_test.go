package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertCommand converts the package's directory of Contour
// manifests to files and checks the exit status and the warnings, then a
// clean manifest, which exits 0.
func TestConvertCommand(t *testing.T) {
	out := t.TempDir()
	src := filepath.Join("..", "..", "internal", "convert", "testdata", "contour")
	_, errOut, code := run(t, "convert", "--output-dir", out, src)
	if code != 1 || !strings.Contains(errOut, "apps/include.yaml:32: kind: projectcontour.io/v1alpha1 ContourConfiguration") {
		t.Fatalf("exit %d (want 1), stderr %q", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, "apps", "include.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "apiVersion: switchyard.dev/v1") || strings.Contains(string(b), "projectcontour.io") {
		t.Errorf("apps/include.yaml was not converted:\n%s", b)
	}

	clean := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(clean, []byte("apiVersion: projectcontour.io/v1\nkind: HTTPProxy\nmetadata: {name: a}\nspec: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, errOut, code := run(t, "convert", clean)
	if code != 0 || errOut != "" || !strings.Contains(stdout, "apiVersion: switchyard.dev/v1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
}
