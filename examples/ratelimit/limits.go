package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	envoy_service_ratelimit_v3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// Rule is one line of the limits file: descriptors of Domain whose
// entries match Entries, in order and all of them, are allowed Requests
// per Unit.
type Rule struct {
	Domain  string
	Entries []EntryMatch
	// Requests per Unit; 0 refuses every request the rule matches.
	Requests uint32
	Unit     Unit
	// Line is where the rule is in the file, for the logs.
	Line int
}

// EntryMatch matches one descriptor entry: its key, and its value unless
// AnyValue, in which case each value is counted on its own (as
// envoyproxy/ratelimit does with a key without a value).
type EntryMatch struct {
	Key, Value string
	AnyValue   bool
}

// Unit is a fixed window's length and its name in the protocol.
type Unit struct {
	Length time.Duration
	Proto  envoy_service_ratelimit_v3.RateLimitResponse_RateLimit_Unit
}

var units = map[string]Unit{
	"second": {time.Second, envoy_service_ratelimit_v3.RateLimitResponse_RateLimit_SECOND},
	"minute": {time.Minute, envoy_service_ratelimit_v3.RateLimitResponse_RateLimit_MINUTE},
	"hour":   {time.Hour, envoy_service_ratelimit_v3.RateLimitResponse_RateLimit_HOUR},
	"day":    {24 * time.Hour, envoy_service_ratelimit_v3.RateLimitResponse_RateLimit_DAY},
}

// ReadLimits reads a limits file: one rule a line,
//
//	DOMAIN KEY[=VALUE],KEY[=VALUE]... REQUESTS/UNIT
//
// with # comments and blank lines ignored.
func ReadLimits(path string) ([]Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseLimits(b)
}

// ParseLimits parses the content of a limits file (see ReadLimits).
func ParseLimits(b []byte) ([]Rule, error) {
	var rules []Rule
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want DOMAIN DESCRIPTOR REQUESTS/UNIT, got %d fields", n, len(f))
		}
		r, err := parseRule(f)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		r.Line = n
		rules = append(rules, r)
	}
	return rules, sc.Err()
}

func parseRule(f []string) (Rule, error) {
	r := Rule{Domain: f[0]}
	for _, e := range strings.Split(f[1], ",") {
		k, v, hasValue := strings.Cut(e, "=")
		if k == "" {
			return r, fmt.Errorf("descriptor %q: an entry without a key", f[1])
		}
		r.Entries = append(r.Entries, EntryMatch{Key: k, Value: v, AnyValue: !hasValue})
	}
	count, unit, ok := strings.Cut(f[2], "/")
	if !ok {
		return r, fmt.Errorf("limit %q: want REQUESTS/UNIT, e.g. 5/minute", f[2])
	}
	n, err := strconv.ParseUint(count, 10, 32)
	if err != nil {
		return r, fmt.Errorf("limit %q: %v", f[2], err)
	}
	r.Requests = uint32(n)
	if r.Unit, ok = units[unit]; !ok {
		return r, fmt.Errorf("limit %q: unit %q is not second, minute, hour or day", f[2], unit)
	}
	return r, nil
}
