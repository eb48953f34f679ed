package admin

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReadyDetail adds the source's line to a ready answer and leaves the
// answer itself alone.
func TestReadyDetail(t *testing.T) {
	h := Handler(Config{
		Ready:    func() bool { return true },
		State:    func() *State { return nil },
		Gatherer: prometheus.NewRegistry(),
		Detail:   func() string { return "etcd: unreachable since then" },
	})
	if code, body := get(t, h, "/readyz"); code != 200 || body != "ok\netcd: unreachable since then\n" {
		t.Errorf("/readyz = %d %q, want 200 with the detail on its own line", code, body)
	}
}
