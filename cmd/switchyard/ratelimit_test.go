package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRateLimitExampleREADME runs the render command of
// examples/ratelimit/README.md as written, and checks what the README
// says of it: with the service every object is valid and Envoy gets the
// ratelimit filter; without it the host fails closed (exit 1); with
// fail-open it is served with a warning.
func TestRateLimitExampleREADME(t *testing.T) {
	b, err := os.ReadFile("../../examples/ratelimit/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "go run ./cmd/switchyard render "); ok {
			args = append([]string{"render"}, strings.Fields(strings.ReplaceAll(rest, "examples/", "../../examples/"))...)
		}
	}
	if args == nil {
		t.Fatal("the README has no `go run ./cmd/switchyard render` line")
	}
	out, errOut, code := run(t, args...)
	if code != 0 || strings.Contains(out, "currentStatus: invalid") || !strings.Contains(out, "name: envoy.filters.http.ratelimit") {
		t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
	}
	out, _, code = run(t, "render", "--source", "../../examples/ratelimit")
	if code != 1 || !strings.Contains(out, "RateLimitServiceUnavailable") {
		t.Fatalf("without --rate-limit-service: exit %d, want 1 and RateLimitServiceUnavailable", code)
	}
	out, _, code = run(t, "render", "--source", "../../examples/ratelimit", "--rate-limit-fail-open", "-o", "json")
	if code != 0 || !strings.Contains(out, "served without global rate limits") || strings.Contains(out, `"envoy.filters.http.ratelimit"`) {
		t.Fatalf("with --rate-limit-fail-open and no service: exit %d, want 0, a warning and no filter", code)
	}
}

// TestRateLimitDefaultPolicyFlag: the default policy file is checked as
// an HTTPProxy's policy is, and a wrong one stops the command with the
// file, the field and an example of what it should hold.
func TestRateLimitDefaultPolicyFlag(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	src := "../../examples/ratelimit"
	for _, tc := range []struct{ name, content, want string }{
		{"two-kinds.yaml", "descriptors:\n- entries:\n  - remoteAddress: {}\n    genericKey: {value: x}\n", "descriptors[0].entries[0]: exactly one of"},
		{"typo.yaml", "descriptor:\n- entries: [{remoteAddress: {}}]\n", `unknown field "descriptor"`},
		{"empty.yaml", "disabled: false\n", "descriptors: must list at least one descriptor"},
	} {
		_, errOut, code := run(t, "render", "--source", src, "--rate-limit-service", "rl/ratelimit", "--rate-limit-default-policy", write(tc.name, tc.content))
		if code != 2 || !strings.Contains(errOut, tc.name) || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 naming the file and %q", tc.name, code, errOut, tc.want)
		}
	}
	if _, errOut, code := run(t, "render", "--source", src, "--rate-limit-default-policy", filepath.Join(dir, "nope.yaml")); code != 2 || !strings.Contains(errOut, "nope.yaml") {
		t.Errorf("a missing file: exit %d, stderr %q", code, errOut)
	}
	good := write("good.json", `{"descriptors": [{"entries": [{"genericKey": {"key": "tier", "value": "default"}}]}]}`)
	out, errOut, code := run(t, "render", "--source", src, "--rate-limit-service", "rl/ratelimit", "--rate-limit-default-policy", good)
	// The shop sets its own global policy, which replaces the default.
	if code != 0 || strings.Contains(out, "descriptor_key: tier") {
		t.Fatalf("a good default policy: exit %d, stderr %q", code, errOut)
	}
}

// TestExplainGlobalRateLimit: explain says which routes of the example
// ask the rate limit service; /healthz disables the host's descriptors.
func TestExplainGlobalRateLimit(t *testing.T) {
	for path, want := range map[string]string{
		"/healthz": "[ratelimit] skipped: the route ignores the virtual host's rate_limits",
		"/api/x":   "[ratelimit] applies: the rate limit service (domain \"switchyard\") decides",
		"/":        "[ratelimit] applies",
	} {
		out, errOut, code := run(t, "explain", "--source", "../../examples/ratelimit", "--rate-limit-service", "rl/ratelimit", "--url", "http://shop.example.com"+path)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, stderr %q, output lacks %q:\n%s", path, code, errOut, want, out)
		}
	}
}
