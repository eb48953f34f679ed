package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the switchyard command line in process and returns its
// output and exit status.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	code := 0
	if err != nil {
		code = 2
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), code
}

func TestRenderQuickstartIsValid(t *testing.T) {
	out, _, code := run(t, "render", "--source", "../../examples/quickstart")
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	// render serves no data plane: Programmed is Unknown, and says why.
	for _, want := range []string{"locality_weighted_lb_config", "sub_zone: shop/storefront-v3", "currentStatus: valid", "programmed:\n    message: 'not served to any data plane", "status: Unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "currentStatus: invalid") {
		t.Error("the quickstart must render with every object valid")
	}
}

func TestRenderExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: web, namespace: default}
spec:
  virtualhost: {fqdn: web.example.com}
  routes:
  - services: [{name: missing, port: 80}]
`
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, "render", "--source", dir, "-o", "json")
	if code != 1 || !strings.Contains(out, "Service default/missing not found") {
		t.Fatalf("an invalid object: exit %d (want 1), output %q", code, out)
	}
	if _, errOut, code := run(t, "render", "--source", filepath.Join(dir, "nope")); code != 2 || errOut == "" {
		t.Fatalf("a missing directory: exit %d (want 2), stderr %q", code, errOut)
	}
	if _, _, code := run(t, "render", "--source", dir, "-o", "xml"); code != 2 {
		t.Fatalf("an unknown format: exit %d, want 2", code)
	}
	if _, _, code := run(t, "render", "--source", dir, "--group", "bogus"); code != 2 {
		t.Fatalf("an unknown group: exit %d, want 2", code)
	}
}

func TestRenderHelpHasAnExample(t *testing.T) {
	out, _, code := run(t, "render", "--help")
	if code != 0 || !strings.Contains(out, "switchyard render --source examples/quickstart") {
		t.Fatalf("exit %d, help %q", code, out)
	}
}

func TestRenderDefaultsToTheEmbeddedQuickstart(t *testing.T) {
	out, errOut, code := run(t, "render", "--group", "dns")
	if code != 0 || !strings.Contains(errOut, "embedded quickstart") || !strings.Contains(out, "web.storefront.shop") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestRenderSkipsKindsItDoesNotRead: a Deployment beside the quickstart is
// noted on standard error and render exits 0; --strict makes it a failure,
// whose message counts what is wrong instead of pointing "above" at output
// that may have gone to a file.
func TestRenderSkipsKindsItDoesNotRead(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"00-infra.yaml", "10-shop.yaml", "20-services.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/quickstart", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {}\n"
	if err := os.WriteFile(filepath.Join(dir, "deploy.yaml"), []byte(deploy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "render", "--source", dir)
	if code != 0 || !strings.Contains(errOut, "note: ") || !strings.Contains(errOut, "Deployment") || strings.Contains(out, "sourceProblems") {
		t.Fatalf("without --strict: exit %d (want 0), stderr %q, sourceProblems in output: %v", code, errOut, strings.Contains(out, "sourceProblems"))
	}
	out, errOut, code = run(t, "render", "--source", dir, "--strict")
	if code != 1 || !strings.Contains(out, "sourceProblems") || !strings.Contains(errOut, "1 documents could not be read (listed in the output, under sourceProblems)") {
		t.Fatalf("with --strict: exit %d (want 1), stderr %q", code, errOut)
	}
}
