package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	envoy_extensions_common_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	envoy_service_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// clock is a settable time for the server's windows.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// startServer serves the example's limits.txt on a loopback port and
// returns a client of it over real gRPC, and the server's clock, which
// starts 10s into a minute.
func startServer(t *testing.T) (envoy_service_ratelimit_v3.RateLimitServiceClient, *clock) {
	t.Helper()
	rules, err := ReadLimits("limits.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 1, 1, 12, 0, 10, 0, time.UTC)}
	srv := NewServer(rules, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.now = c.now
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, lis, srv, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return envoy_service_ratelimit_v3.NewRateLimitServiceClient(cc), c
}

func ask(t *testing.T, c envoy_service_ratelimit_v3.RateLimitServiceClient, domain string, ds []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor) *envoy_service_ratelimit_v3.RateLimitResponse {
	t.Helper()
	resp, err := c.ShouldRateLimit(context.Background(), &envoy_service_ratelimit_v3.RateLimitRequest{Domain: domain, Descriptors: ds})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Statuses) != len(ds) {
		t.Fatalf("%d statuses for %d descriptors", len(resp.Statuses), len(ds))
	}
	return resp
}

func keys(ds []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor) string {
	var parts []string
	for _, d := range ds {
		var kv []string
		for _, e := range d.Entries {
			kv = append(kv, e.Key+"="+e.Value)
		}
		parts = append(parts, strings.Join(kv, ","))
	}
	return strings.Join(parts, " ")
}

// TestAPIKeyLimit sends the descriptors Switchyard configures Envoy to
// send for /api with an API key: 5 a minute per key, then OVER_LIMIT,
// another key counted apart, and a fresh window the next minute.
func TestAPIKeyLimit(t *testing.T) {
	r := render(t)
	client, clk := startServer(t)
	alice := r.descriptors(t, sample{path: "/api/orders", headers: map[string]string{"x-api-key": "alice"}, remote: "192.0.2.1"})
	if got, want := keys(alice), "generic_key=shop-api,api_key=alice"; got != want {
		t.Fatalf("descriptors for /api with a key: %q, want %q", got, want)
	}
	for i := range 5 {
		resp := ask(t, client, r.domain, alice)
		st := resp.Statuses[0]
		if resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OK || st.LimitRemaining != uint32(4-i) {
			t.Fatalf("request %d: %v, remaining %d; want OK, %d", i+1, resp.OverallCode, st.LimitRemaining, 4-i)
		}
		if l := st.CurrentLimit; l.GetRequestsPerUnit() != 5 || l.GetUnit() != envoy_service_ratelimit_v3.RateLimitResponse_RateLimit_MINUTE {
			t.Fatalf("current limit %v, want 5 a minute", l)
		}
	}
	resp := ask(t, client, r.domain, alice)
	if resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OVER_LIMIT || resp.Statuses[0].Code != envoy_service_ratelimit_v3.RateLimitResponse_OVER_LIMIT || resp.Statuses[0].LimitRemaining != 0 {
		t.Fatalf("request 6: %v", resp)
	}
	if d := resp.Statuses[0].DurationUntilReset.AsDuration(); d != 50*time.Second {
		t.Errorf("duration until reset %v, want 50s (the window is the clock's minute)", d)
	}
	bob := r.descriptors(t, sample{path: "/api", headers: map[string]string{"x-api-key": "bob"}, remote: "192.0.2.1"})
	if resp := ask(t, client, r.domain, bob); resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OK {
		t.Fatalf("another key: %v, want OK", resp)
	}
	clk.add(50 * time.Second)
	if resp := ask(t, client, r.domain, alice); resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OK || resp.Statuses[0].LimitRemaining != 4 {
		t.Fatalf("the next minute: %v, want OK with 4 left", resp)
	}
}

// TestAnonymousLimit: /api without a key sends the header_value_match
// descriptor instead, one counter for every anonymous caller.
func TestAnonymousLimit(t *testing.T) {
	r := render(t)
	client, _ := startServer(t)
	var last *envoy_service_ratelimit_v3.RateLimitResponse
	for i, remote := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		ds := r.descriptors(t, sample{path: "/api", remote: remote})
		if got, want := keys(ds), "generic_key=shop-api,header_match=anonymous"; got != want {
			t.Fatalf("descriptors for /api without a key: %q, want %q", got, want)
		}
		last = ask(t, client, r.domain, ds)
		if want := i < 2; (last.OverallCode == envoy_service_ratelimit_v3.RateLimitResponse_OK) != want {
			t.Fatalf("anonymous request %d: %v", i+1, last.OverallCode)
		}
	}
}

// TestHostLimit: the host's descriptor (the client address) limits every
// route without its own policy, 100 a minute per address; /healthz, with
// global.disabled, sends nothing.
func TestHostLimit(t *testing.T) {
	r := render(t)
	client, _ := startServer(t)
	if ds := r.descriptors(t, sample{path: "/healthz", remote: "192.0.2.1"}); len(ds) != 0 {
		t.Fatalf("/healthz sends %q, want nothing", keys(ds))
	}
	ds := r.descriptors(t, sample{path: "/index.html", remote: "192.0.2.9"})
	if got, want := keys(ds), "remote_address=192.0.2.9"; got != want {
		t.Fatalf("descriptors for /index.html: %q, want %q", got, want)
	}
	for i := range 100 {
		if resp := ask(t, client, r.domain, ds); resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OK {
			t.Fatalf("request %d: %v", i+1, resp.OverallCode)
		}
	}
	if resp := ask(t, client, r.domain, ds); resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("request 101: %v, want OVER_LIMIT", resp.OverallCode)
	}
	other := r.descriptors(t, sample{path: "/", remote: "192.0.2.10"})
	if resp := ask(t, client, r.domain, other); resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OK {
		t.Fatalf("another address: %v, want OK", resp.OverallCode)
	}
}

// TestUnknownDomainAndDescriptor: limits are by domain, and a descriptor
// no rule matches is not limited (as envoyproxy/ratelimit answers).
func TestUnknownDomainAndDescriptor(t *testing.T) {
	client, _ := startServer(t)
	anon := []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor{{Entries: []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor_Entry{
		{Key: "generic_key", Value: "shop-api"}, {Key: "header_match", Value: "anonymous"},
	}}}
	for range 5 {
		if resp := ask(t, client, "other", anon); resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OK {
			t.Fatalf("another domain: %v, want OK", resp.OverallCode)
		}
	}
	unknown := []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor{{Entries: []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor_Entry{{Key: "tenant", Value: "x"}}}}
	if resp := ask(t, client, "switchyard", unknown); resp.OverallCode != envoy_service_ratelimit_v3.RateLimitResponse_OK || resp.Statuses[0].CurrentLimit != nil {
		t.Fatalf("an unknown descriptor: %v, want OK without a limit", resp)
	}
}

func TestParseLimits(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"switchyard remote_address 5/fortnight", `unit "fortnight"`},
		{"switchyard remote_address 5", "want REQUESTS/UNIT"},
		{"switchyard remote_address", "got 2 fields"},
		{"switchyard =x 5/second", "without a key"},
		{"switchyard a -1/second", "invalid syntax"},
	} {
		_, err := ParseLimits([]byte("# comment\n\n" + tc.in + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "line 3:") {
			t.Errorf("%q: error %v, want line 3 and %q", tc.in, err, tc.err)
		}
	}
	rules, err := ParseLimits([]byte("d k=v,any 0/day # refuses all\n"))
	if err != nil || len(rules) != 1 || rules[0].Requests != 0 || !rules[0].Entries[1].AnyValue || rules[0].Entries[0].Value != "v" {
		t.Fatalf("%+v %v", rules, err)
	}
}

func TestParseFlags(t *testing.T) {
	if _, err := parseFlags(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "--limits is required") {
		t.Fatalf("no --limits: %v", err)
	}
	cfg, err := parseFlags([]string{"--limits", "limits.txt", "--listen", "127.0.0.1:0"}, io.Discard)
	if err != nil || cfg.limits != "limits.txt" || cfg.listen != "127.0.0.1:0" {
		t.Fatalf("%+v %v", cfg, err)
	}
}
