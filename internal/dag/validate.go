package dag

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"regexp/syntax"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// maxRegexProgramSize mirrors Envoy's default limit on a compiled RE2
// program (re2.max_program_size.error_level = 100). Go's RE2-compatible
// compiler counts instructions much as RE2 does, so a regex over the limit
// here is one Envoy would reject; the count is an approximation, and this
// errs on the side of rejecting.
const maxRegexProgramSize = 100

// maxRegexLen bounds a regex before it is parsed: parsing takes time in
// proportion to the text, and no regex within maxRegexProgramSize needs
// more (every literal character is an instruction).
const maxRegexLen = 4096

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

// validateVirtualHostFQDN checks a virtual host name: a host name, or "*."
// and a domain for a wildcard host, which serves the names one label
// longer (as in Contour: "*.example.com" serves "a.example.com", not
// "a.b.example.com").
func validateVirtualHostFQDN(fqdn string) error {
	domain, wildcard := strings.CutPrefix(fqdn, "*.")
	switch {
	case !wildcard:
		return validateFQDN(fqdn)
	case strings.Contains(domain, "*"):
		return fmt.Errorf("%q: a wildcard is allowed only as the whole leftmost label, as in \"*.example.com\"", fqdn)
	case !strings.Contains(domain, "."):
		return fmt.Errorf("%q: a wildcard host needs a domain of at least two labels", fqdn)
	}
	return validateFQDN(domain)
}

// validateFQDN checks a host name, without wildcards: those are for
// virtual hosts only (see validateVirtualHostFQDN).
func validateFQDN(fqdn string) error {
	if fqdn == "" {
		return errors.New("must be set")
	}
	if len(fqdn) > validation.DNS1123SubdomainMaxLength {
		return fmt.Errorf("is %d characters long, over the limit of %d", len(fqdn), validation.DNS1123SubdomainMaxLength)
	}
	if strings.Contains(fqdn, "*") {
		return fmt.Errorf("%q: a wildcard is not a host name", fqdn)
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
	if len(expr) > maxRegexLen {
		return fmt.Errorf("regex is %d characters long, over the limit of %d", len(expr), maxRegexLen)
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
// Pseudo-headers are rejected: Envoy refuses to set or remove them (a
// condition may match some, see validateMatchHeaderName).
func validateHeaderName(name string) error {
	if name == "" {
		return errors.New("header name must not be empty")
	}
	if strings.HasPrefix(name, ":") {
		return fmt.Errorf("%q is a pseudo-header, which cannot be set or removed", name)
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
	return validateText(v)
}

// validateText checks a free-form string that reaches the wire as a
// protobuf string: it must be UTF-8, which every client's parser insists
// on (the encoder the cache uses does not check), and hold no control
// character other than tab.
func validateText(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			return fmt.Errorf("%q contains the control character %U", s, r)
		}
	}
	return nil
}

// validateContext checks an authorization context: the keys and values
// are sent to the authorization server as they are.
func validateContext(ctx map[string]string) error {
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" {
			return errors.New("a key is empty")
		}
		if err := validateText(k); err != nil {
			return fmt.Errorf("key %v", err)
		}
		if err := validateText(ctx[k]); err != nil {
			return fmt.Errorf("value of %q: %v", k, err)
		}
	}
	return nil
}

// validateSubjectNames checks the names of which an upstream certificate
// must carry one: as in Contour, the first is subjectName.
func validateSubjectNames(first string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if len(names) > 8 {
		return fmt.Errorf(": %d names, over the limit of 8", len(names))
	}
	if names[0] != first {
		return fmt.Errorf("[0]: %q must be subjectName, %q", names[0], first)
	}
	for i, n := range names {
		if err := validateSubjectName(n); err != nil {
			return fmt.Errorf("[%d]: %v", i, err)
		}
	}
	return nil
}

// validateSubjectName checks the name an upstream certificate must carry;
// it is also sent as SNI, which allows no spaces and at most 255 bytes.
func validateSubjectName(s string) error {
	switch {
	case s == "":
		return errors.New("must be set")
	case len(s) > 255:
		return errors.New("is longer than 255 characters")
	case strings.ContainsAny(s, " \t"):
		return fmt.Errorf("%q contains a space", s)
	}
	return validateText(s)
}

// validateRouteName checks a route's name, which becomes part of a DNS
// name (<route>.<proxy>.<namespace>): a DNS label, as the CRD requires.
func validateRouteName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid route name: %s", name, strings.Join(errs, "; "))
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
	if !utf8.ValidString(p) {
		return fmt.Errorf("%q is not valid UTF-8", p)
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
