package main

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	envoy_extensions_common_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	envoy_service_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Server answers ShouldRateLimit with fixed windows: each rule's counter
// for a descriptor starts at zero at the start of every unit (on the
// clock, not from the first request), and a request is over the limit
// when it would take the counter past the rule's requests.
type Server struct {
	envoy_service_ratelimit_v3.UnimplementedRateLimitServiceServer
	rules []Rule
	log   *slog.Logger
	// now is the clock, replaced by tests.
	now func() time.Time

	mu sync.Mutex
	// counts are the hits of the current window by counter key (see
	// counterKey); windows are their windows' starts.
	counts  map[string]uint64
	windows map[string]time.Time
}

// NewServer serves rules.
func NewServer(rules []Rule, log *slog.Logger) *Server {
	return &Server{rules: rules, log: log, now: time.Now, counts: map[string]uint64{}, windows: map[string]time.Time{}}
}

// ShouldRateLimit counts the request against every descriptor a rule
// matches and answers OVER_LIMIT when any is over, with one status per
// descriptor in the request's order. A descriptor no rule matches is not
// limited.
func (s *Server) ShouldRateLimit(_ context.Context, req *envoy_service_ratelimit_v3.RateLimitRequest) (*envoy_service_ratelimit_v3.RateLimitResponse, error) {
	hits := uint64(req.GetHitsAddend())
	if hits == 0 {
		hits = 1
	}
	now := s.now()
	resp := &envoy_service_ratelimit_v3.RateLimitResponse{OverallCode: envoy_service_ratelimit_v3.RateLimitResponse_OK}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range req.GetDescriptors() {
		st := s.count(req.GetDomain(), d, hits, now)
		if st.Code == envoy_service_ratelimit_v3.RateLimitResponse_OVER_LIMIT {
			resp.OverallCode = st.Code
		}
		resp.Statuses = append(resp.Statuses, st)
	}
	if resp.OverallCode == envoy_service_ratelimit_v3.RateLimitResponse_OVER_LIMIT {
		s.log.Info("over limit", "domain", req.GetDomain(), "descriptors", describe(req.GetDescriptors()))
	}
	return resp, nil
}

// count adds hits to the first rule that matches d; the caller holds mu.
func (s *Server) count(domain string, d *envoy_extensions_common_ratelimit_v3.RateLimitDescriptor, hits uint64, now time.Time) *envoy_service_ratelimit_v3.RateLimitResponse_DescriptorStatus {
	for i := range s.rules {
		r := &s.rules[i]
		if r.Domain != domain || !matches(r.Entries, d.GetEntries()) {
			continue
		}
		key := counterKey(i, d)
		start := now.Truncate(r.Unit.Length)
		if !s.windows[key].Equal(start) {
			s.windows[key], s.counts[key] = start, 0
		}
		st := &envoy_service_ratelimit_v3.RateLimitResponse_DescriptorStatus{
			Code:               envoy_service_ratelimit_v3.RateLimitResponse_OK,
			CurrentLimit:       &envoy_service_ratelimit_v3.RateLimitResponse_RateLimit{RequestsPerUnit: r.Requests, Unit: r.Unit.Proto},
			DurationUntilReset: durationpb.New(start.Add(r.Unit.Length).Sub(now)),
		}
		limit := uint64(r.Requests)
		if s.counts[key]+hits > limit {
			// A refused request takes nothing: the window's count stays
			// what was let through.
			st.Code = envoy_service_ratelimit_v3.RateLimitResponse_OVER_LIMIT
		} else {
			s.counts[key] += hits
		}
		st.LimitRemaining = uint32(limit - s.counts[key])
		return st
	}
	return &envoy_service_ratelimit_v3.RateLimitResponse_DescriptorStatus{Code: envoy_service_ratelimit_v3.RateLimitResponse_OK}
}

// matches reports whether a descriptor's entries are exactly the rule's.
func matches(rule []EntryMatch, entries []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor_Entry) bool {
	if len(rule) != len(entries) {
		return false
	}
	for i, m := range rule {
		e := entries[i]
		if e.GetKey() != m.Key || (!m.AnyValue && e.GetValue() != m.Value) {
			return false
		}
	}
	return true
}

// counterKey names the counter of one rule and one descriptor's values,
// so that a rule with a key and no value counts each value apart.
func counterKey(rule int, d *envoy_extensions_common_ratelimit_v3.RateLimitDescriptor) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(rule))
	for _, e := range d.GetEntries() {
		b.WriteString("\x00" + e.GetKey() + "\x00" + e.GetValue())
	}
	return b.String()
}

func describe(ds []*envoy_extensions_common_ratelimit_v3.RateLimitDescriptor) string {
	parts := make([]string, 0, len(ds))
	for _, d := range ds {
		var kv []string
		for _, e := range d.GetEntries() {
			kv = append(kv, e.GetKey()+"="+e.GetValue())
		}
		parts = append(parts, "["+strings.Join(kv, ",")+"]")
	}
	return strings.Join(parts, " ")
}
