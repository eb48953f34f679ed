package console_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchyard-dev/switchyard/examples"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// updateScreenshots writes the screenshots the browser tests take into
// site/img, where site/console.md shows them; without it they go to the
// test's temporary directory, so a plain test run leaves the tree alone.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the console's screenshots into site/img")

// chromium returns the path of a Chromium binary. Without one the browser
// tests skip, except in CI (CI=true), where .ci/run installs Chromium and
// a missing one is a failure rather than a silently untested console.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium binary on PATH, and CI=true: install Debian's chromium package (.ci/run does)")
	}
	t.Skip("skipping the browser tests: no chromium binary on PATH (apt-get install chromium to run them)")
	return ""
}

// browser starts a headless Chromium for the test and returns a context
// that drives one tab of it.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// quickstart runs a control plane serving a copy of the quickstart and
// returns the copy's directory, the admin endpoint's base URL and the xDS
// server's address.
func quickstart(t *testing.T) (dir, base, xds string) {
	t.Helper()
	dir = t.TempDir()
	if err := examples.WriteQuickstart(dir); err != nil {
		t.Fatal(err)
	}
	base, xds = serveDir(t, dir)
	return dir, base, xds
}

// serveDir runs a control plane on dir, following its edits, and returns
// the admin endpoint's base URL and the xDS server's address once the
// first build is done.
func serveDir(t *testing.T, dir string) (base, xds string) {
	t.Helper()
	return serveDirWith(t, dir, nil)
}

// serveDirWith is serveDir with the config changed by mutate (may be nil).
func serveDirWith(t *testing.T, dir string, mutate func(*server.Config)) (base, xds string) {
	t.Helper()
	cfg := server.Config{
		XDSAddress:   "127.0.0.1:0",
		AdminAddress: "127.0.0.1:0",
		Holdoff:      20 * time.Millisecond,
		MaxWait:      100 * time.Millisecond,
		Log:          slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	cfg.Pipeline.Translator = translator.DefaultOptions()
	if mutate != nil {
		mutate(&cfg)
	}
	s := server.New(cfg)
	if err := s.ListenAdmin(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, &server.DirSource{Root: dir, Log: cfg.Log}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("control plane: %v", err)
		}
	})
	base = "http://" + s.AdminAddr().String()
	start := time.Now()
	waitFor(t, 5*time.Minute, "the first build", func() bool {
		r, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		_ = r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	t.Logf("first build of %s: %v", dir, time.Since(start).Round(time.Millisecond))
	return base, s.XDSAddr().String()
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// getJSON decodes one of the console's APIs into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(r.Body)
		t.Fatalf("GET %s: %d %s", url, r.StatusCode, b)
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// edit rewrites one manifest of dir, replacing old with new, which must
// be there.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// screenshot saves the tab as site/img/<name>.png with -update-screenshots,
// in a temporary directory otherwise.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := t.TempDir()
	if *updateScreenshots {
		dir = filepath.Join("..", "..", "site", "img")
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// open shows the console page of hash and waits until it is drawn.
func open(t *testing.T, ctx context.Context, base, hash string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#"+hash)); err != nil {
		t.Fatal(err)
	}
	visible(t, ctx, `#page[data-ready=`+jsString(hash)+`]`)
}

// visible waits for an element matching sel, for at most 30s, so that a
// missing element fails its own check instead of the whole test's time.
func visible(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		t.Fatalf("waiting for %s: %v", sel, err)
	}
}

// text returns the text of the first element matching sel, waiting for it.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	visible(t, ctx, sel)
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}

// color returns the computed CSS color of the first element matching sel.
func color(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	visible(t, ctx, sel)
	c, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(`+jsString(sel)+`)).color`))
	if err != nil {
		t.Fatalf("color of %s: %v", sel, err)
	}
	return c
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// red is the console's colour for what carries no traffic (console.css).
const red = "rgb(176, 0, 32)"
