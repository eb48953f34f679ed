package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/pipeline"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

const quickstart = "../../examples/quickstart"

func TestExplainOffline(t *testing.T) {
	out, _, code := run(t, "explain", "--source", quickstart, "--url", "http://nope.example.com/")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (an explained 404 is not an error)", code)
	}
	for _, want := range []string{"=> not_found 404", `fix: no root HTTPProxy has spec.virtualhost.fqdn "nope.example.com"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, _, code = run(t, "explain", "--source", quickstart, "--url", "http://shop.example.com/", "-o", "json")
	if code != 0 {
		t.Fatalf("-o json: exit %d", code)
	}
	var r explain.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("-o json is not an explanation: %v\n%s", err, out)
	}
	if r.Decision.Kind != explain.KindRedirect || r.Decision.Location != "https://shop.example.com/" {
		t.Errorf("decision %+v, want the redirect to https", r.Decision)
	}
}

func TestExplainUsage(t *testing.T) {
	for _, args := range [][]string{
		{"explain"},
		{"explain", "--url", "http://a/", "-H", "no-colon"},
		{"explain", "--url", "http://a/", "-o", "yaml"},
		{"explain", "--url", "ftp://a/"},
		{"explain", "--url", "http://a/", "--group", "dns"},
		{"explain", "--url", "http://a/", "--source", quickstart, "--server", "http://127.0.0.1:1"},
	} {
		if _, _, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestExplainServer runs the control plane in process on a copy of the
// quickstart and asks its admin endpoint, as `explain --server` does: the
// answer must be the offline one, and follow an edit of the manifests.
func TestExplainServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(quickstart)); err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Config{
		XDSAddress: "127.0.0.1:0", AdminAddress: "127.0.0.1:0",
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Pipeline: pipeline.Config{Translator: translator.DefaultOptions()},
	})
	if err := s.ListenAdmin(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Run(ctx, &server.DirSource{Root: dir, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	admin := "http://" + s.AdminAddr().String()
	waitUntil(t, "the first build", func() bool {
		resp, err := http.Get(admin + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	args := []string{"--url", "https://shop.example.com/api/cart", "-H", "X-Canary: true", "-o", "json"}
	remote, stderr, code := run(t, append([]string{"explain", "--server", admin}, args...)...)
	if code != 0 {
		t.Fatalf("--server: exit %d: %s", code, stderr)
	}
	local, _, code := run(t, append([]string{"explain", "--source", dir}, args...)...)
	if code != 0 {
		t.Fatalf("--source: exit %d", code)
	}
	if remote != local {
		t.Errorf("the server's explanation differs from the offline one:\nserver:\n%s\noffline:\n%s", remote, local)
	}
	var r explain.Result
	if err := json.Unmarshal([]byte(remote), &r); err != nil {
		t.Fatal(err)
	}
	if r.Decision.Kind != explain.KindForward || len(r.Backends) == 0 {
		t.Errorf("decision %+v with %d backends, want a forward", r.Decision, len(r.Backends))
	}

	// Delete the Services: the server's answer becomes a 503 naming the
	// route as soon as it serves the change.
	if err := os.Remove(filepath.Join(dir, "20-services.yaml")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the explanation to follow the edit", func() bool {
		out, _, code := run(t, "explain", "--server", admin, "--url", "https://shop.example.com/api/cart", "-o", "json")
		r = explain.Result{}
		return code == 0 && json.Unmarshal([]byte(out), &r) == nil && r.Decision.Kind == explain.KindUnavailable
	})
	if o := r.Decision.Owner; o == nil || o.HTTPProxy != "shop/storefront" || r.Decision.Fix == "" {
		t.Errorf("the 503 does not say what to fix: %+v", r.Decision)
	}

	if _, stderr, code := run(t, "explain", "--server", admin, "--url", "http://a/", "--group", "dns"); code != 2 || !strings.Contains(stderr, "unknown group") {
		t.Errorf("unknown group through the server: exit %d, %q", code, stderr)
	}
}

// waitUntil polls cond until it holds, failing the test after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
