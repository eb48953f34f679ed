package dirsource

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// apimachinery checks names and labels with regular expressions, which
// took a tenth of the time to read a directory. Each check here accepts
// what the regular expression accepts with a loop over the bytes, and asks
// apimachinery only about what it does not accept, so that every message
// stays apimachinery's own; TestFastChecksAgree holds the two equal.

// isDNS1123Label is validation.IsDNS1123Label.
func isDNS1123Label(s string) []string {
	if len(s) <= validation.DNS1123LabelMaxLength && labelOf(s, lowerAlnum, lowerAlnum, dnsInner) {
		return nil
	}
	return validation.IsDNS1123Label(s)
}

// isDNS1035Label is apivalidation.NameIsDNS1035Label without a prefix.
func isDNS1035Label(s string) []string {
	if len(s) <= validation.DNS1035LabelMaxLength && labelOf(s, lower, lowerAlnum, dnsInner) {
		return nil
	}
	return apivalidation.NameIsDNS1035Label(s, false)
}

// isDNS1123Subdomain is apivalidation.NameIsDNSSubdomain without a prefix.
func isDNS1123Subdomain(s string) []string {
	if subdomainOK(s) {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(s, false)
}

// isLabelValue is content.IsLabelValue.
func isLabelValue(s string) []string {
	if s == "" || (len(s) <= validation.LabelValueMaxLength && labelOf(s, alnum, alnum, nameInner)) {
		return nil
	}
	return content.IsLabelValue(s)
}

// isLabelKey is content.IsLabelKey: a name, with a DNS subdomain and "/"
// before it or not.
func isLabelKey(s string) []string {
	if qualifiedNameOK(s) {
		return nil
	}
	return content.IsLabelKey(s)
}

// validateLabels is metav1validation.ValidateLabels of the field at path,
// which is made only when a label is wrong.
func validateLabels(labels map[string]string, path string, more ...string) field.ErrorList {
	for k, v := range labels {
		if !qualifiedNameOK(k) || isLabelValue(v) != nil {
			return metav1validation.ValidateLabels(labels, field.NewPath(path, more...))
		}
	}
	return nil
}

func qualifiedNameOK(s string) bool {
	prefix, name, found := strings.Cut(s, "/")
	if !found {
		name = prefix
	} else if prefix == "" || !subdomainOK(prefix) {
		return false
	}
	return len(name) <= labelNameMaxLength && labelOf(name, alnum, alnum, nameInner)
}

func subdomainOK(s string) bool {
	if len(s) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	for {
		label, rest, more := strings.Cut(s, ".")
		if !labelOf(label, lowerAlnum, lowerAlnum, dnsInner) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// labelOf reports whether s is not empty, starts with a byte first
// accepts, ends with one last accepts, and has inner bytes in between.
func labelOf(s string, first, last, inner func(byte) bool) bool {
	n := len(s)
	if n == 0 || !first(s[0]) || !last(s[n-1]) {
		return false
	}
	for i := 1; i < n-1; i++ {
		if !inner(s[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) bool      { return 'a' <= c && c <= 'z' }
func lowerAlnum(c byte) bool { return lower(c) || ('0' <= c && c <= '9') }
func alnum(c byte) bool      { return isAlnum(c) }
func dnsInner(c byte) bool   { return lowerAlnum(c) || c == '-' }
func nameInner(c byte) bool  { return alnum(c) || c == '-' || c == '_' || c == '.' }

// labelNameMaxLength is the longest name part of a label key that
// content.IsLabelKey accepts.
const labelNameMaxLength = 63

// canonicalIPv4 reports whether s is an IPv4 address in the one form
// validation.IsValidIP accepts for it: four decimal numbers up to 255,
// without leading zeros, separated by dots. What it refuses is left to
// IsValidIP, which parses the address twice and prints it again.
func canonicalIPv4(s string) bool {
	for part := range 4 {
		n, digits := 0, 0
		for digits < len(s) && '0' <= s[digits] && s[digits] <= '9' {
			n = n*10 + int(s[digits]-'0')
			digits++
			if digits > 3 {
				return false
			}
		}
		if digits == 0 || n > 255 || (digits > 1 && s[0] == '0') {
			return false
		}
		s = s[digits:]
		if part < 3 {
			if s == "" || s[0] != '.' {
				return false
			}
			s = s[1:]
		}
	}
	return s == ""
}
