package dag

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// defaultRateLimitStatus answers requests over a local limit.
const defaultRateLimitStatus = 429

// rateLimitStatuses are the 4xx and 5xx codes Envoy's StatusCode enum
// defines: a local rate limit's status must be one of them, or Envoy
// rejects the whole route configuration.
var rateLimitStatuses = []uint32{400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 423, 424, 426, 428, 429, 431, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511}

// LocalRateLimit is a token bucket of Envoy's local_ratelimit filter.
type LocalRateLimit struct {
	// MaxTokens is requests plus burst; TokensPerFill is requests.
	MaxTokens     uint32
	TokensPerFill uint32
	FillInterval  time.Duration
	// StatusCode answers limited requests.
	StatusCode uint32
	// ResponseHeaders are added to those answers, sorted by name.
	ResponseHeaders []HeaderValue
}

// parseLocalRateLimit reads rateLimitPolicy.local (field names the
// rateLimitPolicy). It returns nil when there is none.
func parseLocalRateLimit(p *switchyardv1.RateLimitPolicy, field string) (*LocalRateLimit, error) {
	if p == nil || p.Local == nil {
		return nil, nil
	}
	l := p.Local
	field += ".local"
	out := &LocalRateLimit{TokensPerFill: l.Requests, StatusCode: defaultRateLimitStatus}
	switch l.Unit {
	case "second":
		out.FillInterval = time.Second
	case "minute":
		out.FillInterval = time.Minute
	case "hour":
		out.FillInterval = time.Hour
	default:
		return nil, fmt.Errorf("%s.unit: %q is not second, minute or hour", field, l.Unit)
	}
	if l.Requests == 0 {
		return nil, fmt.Errorf("%s.requests: must be at least 1; a rate of 0 would refuse every request", field)
	}
	if uint64(l.Requests)+uint64(l.Burst) > math.MaxUint32 {
		return nil, fmt.Errorf("%s.burst: requests plus burst is over %d", field, uint32(math.MaxUint32))
	}
	out.MaxTokens = l.Requests + l.Burst
	if c := l.ResponseStatusCode; c != 0 {
		if !slices.Contains(rateLimitStatuses, c) {
			return nil, fmt.Errorf("%s.responseStatusCode: %d is not a 4xx or 5xx status Envoy knows", field, c)
		}
		out.StatusCode = c
	}
	seen := map[string]bool{}
	for i, h := range l.ResponseHeadersToAdd {
		f := field + ".responseHeadersToAdd[" + strconv.Itoa(i) + "]"
		if err := validateHeaderName(h.Name); err != nil {
			return nil, fmt.Errorf("%s.name: %v", f, err)
		}
		if err := validateHeaderValue(h.Value); err != nil {
			return nil, fmt.Errorf("%s.value: %v", f, err)
		}
		if seen[h.Name] {
			return nil, fmt.Errorf("%s.name: %q is listed twice", f, h.Name)
		}
		seen[h.Name] = true
		out.ResponseHeaders = append(out.ResponseHeaders, HeaderValue{Name: h.Name, Value: h.Value})
	}
	slices.SortFunc(out.ResponseHeaders, func(a, b HeaderValue) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// hostRateLimit reads the virtual host's local rate limit. A wrong one is
// an error and the host is not served: serving it unlimited is the
// silent failure the limit exists to prevent.
func (rb *rootBuilder) hostRateLimit(root *switchyardv1.HTTPProxy, st *Status) bool {
	p := root.Spec.VirtualHost.RateLimitPolicy
	l, err := parseLocalRateLimit(p, "spec.virtualhost.rateLimitPolicy")
	if err != nil {
		st.addError(ErrVirtualHost, "InvalidRateLimitPolicy", "%v; the virtual host is not served until it is fixed", err)
		return false
	}
	if l != nil && root.Spec.TCPProxy != nil {
		st.addError(ErrVirtualHost, "RateLimitWithTCPProxy", "spec.virtualhost.rateLimitPolicy: limits HTTP requests and cannot be used with spec.tcpproxy")
		return false
	}
	rb.hostPolicy.rateLimit = l
	return true
}

// routeRateLimit reads a route's local rate limit; a wrong one makes the
// route answer invalidRouteStatus.
func (b *routeBuilder) routeRateLimit(r *switchyardv1.Route, out *Route) bool {
	l, err := parseLocalRateLimit(r.RateLimitPolicy, b.field+".rateLimitPolicy")
	if err != nil {
		b.st.addError(ErrRoute, "InvalidRateLimitPolicy", "%v", err)
		return false
	}
	out.RateLimit = l
	return true
}
