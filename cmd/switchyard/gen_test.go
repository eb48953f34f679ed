package main

import "testing"

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

func TestXDSLoadUsage(t *testing.T) {
	if _, _, code := run(t, "xdsload", "--streams", "3"); code != 2 {
		t.Errorf("xdsload without --target: exit %d, want 2", code)
	}
}
