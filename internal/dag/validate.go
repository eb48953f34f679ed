package dag

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"regexp/syntax"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// maxRegexProgramSize mirrors Envoy's default limit on a compiled RE2
// program (re2.max_program_size.error_level = 100). Go's RE2-compatible
// compiler counts instructions much as RE2 does, so a regex over the limit
// here is one Envoy would reject; the count is an approximation, and this
// errs on the side of rejecting.
const maxRegexProgramSize = 100

// Duration bounds: a timeout shorter than a millisecond is a typo, and one
// longer than a year is better written as "infinity".
const (
	minDuration = time.Millisecond
	maxDuration = 365 * 24 * time.Hour
)

// parseDuration parses a timeout. "infinity" (or "infinite") disables the
// timeout and is returned as 0. An empty string returns nil.
func parseDuration(s string) (*time.Duration, error) {
	if s == "" {
		return nil, nil
	}
	if s == "infinity" || s == "infinite" {
		d := time.Duration(0)
		return &d, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a duration such as \"30s\" or \"infinity\"", s)
	}
	if d < minDuration || d > maxDuration {
		return nil, fmt.Errorf("%q is out of range: use a duration from 1ms to 8760h, or \"infinity\"", s)
	}
	return &d, nil
}

// validateFQDN checks a virtual host name. Wildcards are rejected because
// plain-HTTP hosts are selected by exact match (scoped routes).
func validateFQDN(fqdn string) error {
	if fqdn == "" {
		return errors.New("must be set")
	}
	if strings.Contains(fqdn, "*") {
		return fmt.Errorf("%q: wildcard host names are not supported; list each host in its own root HTTPProxy", fqdn)
	}
	if _, err := netip.ParseAddr(fqdn); err == nil {
		return fmt.Errorf("%q is an IP address; a virtual host needs a DNS name", fqdn)
	}
	if strings.Contains(fqdn, ":") {
		return fmt.Errorf("%q must not contain a port", fqdn)
	}
	if errs := validation.IsDNS1123Subdomain(fqdn); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid host name: %s", fqdn, strings.Join(errs, "; "))
	}
	return nil
}

// validateRegex checks that Envoy's RE2 would accept a regex.
func validateRegex(expr string) error {
	if expr == "" {
		return errors.New("regex must not be empty")
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return fmt.Errorf("%q is not a valid RE2 regex: %v", expr, err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return fmt.Errorf("%q is not a valid RE2 regex: %v", expr, err)
	}
	if n := len(prog.Inst); n > maxRegexProgramSize {
		return fmt.Errorf("%q compiles to %d instructions, over Envoy's limit of %d; simplify it", expr, n, maxRegexProgramSize)
	}
	return nil
}

// validateHeaderName checks an HTTP header name (an RFC 9110 token).
// Pseudo-headers are rejected: they cannot be set or matched as headers.
func validateHeaderName(name string) error {
	if name == "" {
		return errors.New("header name must not be empty")
	}
	if len(name) > 256 {
		return errors.New("header name is longer than 256 characters")
	}
	for _, r := range name {
		if !isTokenChar(r) {
			return fmt.Errorf("header name %q contains %q, which is not allowed in a header name", name, r)
		}
	}
	return nil
}

func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// validateHeaderValue rejects values Envoy would refuse or that could split
// a header: control characters other than tab, CR and LF above all.
func validateHeaderValue(v string) error {
	if len(v) > 4096 {
		return errors.New("header value is longer than 4096 characters")
	}
	for _, r := range v {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			return fmt.Errorf("header value %q contains the control character %U", v, r)
		}
	}
	return nil
}

// validatePathPart checks a path used in a condition, a rewrite or a
// redirect: it must be absolute, and may not hold a query, a fragment,
// control characters or "." / ".." segments (which could escape the prefix
// a rewrite is meant to stay under).
func validatePathPart(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q must start with /", p)
	}
	if len(p) > 1024 {
		return errors.New("path is longer than 1024 characters")
	}
	for _, r := range p {
		if r < 0x21 || r == 0x7f || r == '?' || r == '#' || r == '\\' {
			return fmt.Errorf("%q contains %q, which is not allowed in a path", p, r)
		}
	}
	decoded, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Errorf("%q has an invalid percent-encoding", p)
	}
	for _, seg := range strings.Split(decoded, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%q contains a %q segment", p, seg)
		}
	}
	if strings.Contains(p, "//") {
		return fmt.Errorf("%q contains an empty segment (//)", p)
	}
	return nil
}

// toUint32 converts a count that the API types hold as a wider integer.
func toUint32(v int64) (uint32, error) {
	if v < 0 || v > math.MaxUint32 {
		return 0, fmt.Errorf("%d is out of range 0-%d", v, uint32(math.MaxUint32))
	}
	return uint32(v), nil
}

func secondsDuration(s int64) time.Duration { return time.Duration(s) * time.Second }
