package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderFallbackCertificate: --fallback-certificate reaches the build,
// so the hosts that enable it get the fallback chain; without the flag they
// are invalid and the status says which flag is missing; a value that is
// not NAMESPACE/NAME is a usage error.
func TestRenderFallbackCertificate(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "internal", "translator", "testdata", "fallback-cert-enabled", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "render", "--source", dir, "--fallback-certificate", "ops/fallback")
	if code != 0 || !strings.Contains(out, "route_config_name: ingress_fallbackcert") || !strings.Contains(out, "name: fallback-certificate") {
		t.Fatalf("with the flag: exit %d (want 0), stderr %q, fallback chain in the output: %v", code, errOut, strings.Contains(out, "fallback-certificate"))
	}
	out, _, code = run(t, "render", "--source", dir)
	if code != 1 || !strings.Contains(out, "--fallback-certificate NAMESPACE/NAME") || strings.Contains(out, "ingress_fallbackcert") {
		t.Fatalf("without the flag: exit %d (want 1), and the hosts must say the flag is missing", code)
	}
	if _, _, code := run(t, "render", "--source", dir, "--fallback-certificate", "fallback"); code != 2 {
		t.Fatalf("a value without a namespace: exit %d, want 2", code)
	}
}
