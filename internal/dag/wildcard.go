package dag

import "regexp"

// wildcardAuthority is the condition every route of a wildcard host
// "*.domain" carries: :authority is one DNS label, then the domain, and
// optionally a port, compared without regard to case as host names are.
// Envoy's own "*.domain" (in SNI and virtual host domains) matches any
// number of labels; this keeps Contour's meaning of one.
func wildcardAuthority(domain string) HeaderMatch {
	return HeaderMatch{
		Name:  ":authority",
		Kind:  MatchRegex,
		Value: `(?i)[a-z0-9]([-a-z0-9]*[a-z0-9])?\.` + regexp.QuoteMeta(domain) + `(:[0-9]+)?`,
	}
}
