package translator

import (
	"regexp"
	"strings"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// grpcPseudoHeaders resolves a route's pseudo-header conditions for gRPC
// clients, which route on the RPC's metadata, where no pseudo-header is:
//
//   - :method is always POST for an RPC, so the condition is decided here:
//     dropped when POST meets it, and the whole route left out when not.
//   - :authority is dropped: the client already picked the host by its
//     target name (for a wildcard host the condition is the one-label rule,
//     which the target name meets by construction).
//   - a route with any other pseudo-header condition (:path, :scheme) is
//     left out, as gRPC would never match it.
//
// It returns r itself when there is nothing to resolve.
func grpcPseudoHeaders(r *dag.Route) (*dag.Route, bool) {
	var kept []dag.HeaderMatch
	changed := false
	for _, h := range r.HeaderMatches {
		switch h.Name {
		case ":method":
			if !headerMatchesValue(h, "POST") {
				return nil, false
			}
		case ":authority":
		default:
			if strings.HasPrefix(h.Name, ":") {
				return nil, false
			}
			kept = append(kept, h)
			continue
		}
		changed = true
	}
	if !changed {
		return r, true
	}
	out := *r
	out.HeaderMatches = kept
	return &out, true
}

// headerMatchesValue evaluates one header condition against a present
// header value, as Envoy would.
func headerMatchesValue(h dag.HeaderMatch, v string) bool {
	want, got := h.Value, v
	if h.IgnoreCase {
		want, got = strings.ToLower(want), strings.ToLower(got)
	}
	var match bool
	switch h.Kind {
	case dag.MatchPresent:
		match = true
	case dag.MatchExact:
		match = got == want
	case dag.MatchPrefix:
		match = strings.HasPrefix(got, want)
	case dag.MatchContains:
		match = strings.Contains(got, want)
	case dag.MatchRegex:
		re, err := regexp.Compile("^(?:" + h.Value + ")$")
		match = err == nil && re.MatchString(v)
	}
	return match != h.Invert
}
