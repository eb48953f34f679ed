package dirsource

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestFastChecksAgree compares each byte loop with the apimachinery check
// it stands for on every string of up to five bytes over an alphabet of
// each class of byte they treat apart, and on strings at and past every
// length limit.
func TestFastChecksAgree(t *testing.T) {
	checks := []struct {
		name       string
		fast, slow func(string) []string
	}{
		{"DNS1123Label", isDNS1123Label, validation.IsDNS1123Label},
		{"NamespaceName", isDNS1123Label, func(s string) []string { return apivalidation.ValidateNamespaceName(s, false) }},
		{"DNS1035Label", isDNS1035Label, func(s string) []string { return apivalidation.NameIsDNS1035Label(s, false) }},
		{"DNS1123Subdomain", isDNS1123Subdomain, func(s string) []string { return apivalidation.NameIsDNSSubdomain(s, false) }},
		{"LabelValue", isLabelValue, content.IsLabelValue},
		{"LabelKey", isLabelKey, content.IsLabelKey},
		{"Labels", func(s string) []string {
			return errStrings(validateLabels(map[string]string{s: s}, "metadata", "labels"))
		}, func(s string) []string {
			return errStrings(metav1validation.ValidateLabels(map[string]string{s: s}, field.NewPath("metadata", "labels")))
		}},
	}
	var inputs []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for _, c := range "aZ0-._/" {
			grow(prefix+string(c), n-1)
		}
	}
	grow("", 5)
	for _, n := range []int{62, 63, 64, 252, 253, 254} {
		inputs = append(inputs, strings.Repeat("a", n), "a/"+strings.Repeat("b", n), strings.Repeat("c", n)+"/d",
			strings.Repeat("a.", n/2)+"a")
	}
	for _, c := range checks {
		for _, s := range inputs {
			fast, slow := c.fast(s), c.slow(s)
			if strings.Join(fast, "\n") != strings.Join(slow, "\n") {
				t.Fatalf("%s(%q) = %q, apimachinery says %q", c.name, s, fast, slow)
			}
		}
	}
}

func errStrings[E interface{ Error() string }](errs []E) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// TestCanonicalIPv4Agrees compares canonicalIPv4 with IsValidIP (and the
// IPv4 family check validateAddress adds) on every dotted string of up to
// five parts made of numbers at each edge (leading zeros, 255, 256, four
// digits), blanks, signs and letters.
func TestCanonicalIPv4Agrees(t *testing.T) {
	parts := []string{"", "0", "00", "1", "01", "9", "10", "99", "100", "199", "249", "255", "256", "300", "999", "0255", "1000", "+1", " 1", "a", "ff"}
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		if n == 0 {
			for _, s := range []string{prefix, prefix + ".", prefix + " ", "::ffff:" + prefix, prefix + "/8"} {
				valid := len(validation.IsValidIP(nil, s)) == 0 && !strings.Contains(s, ":")
				if fast := canonicalIPv4(s); fast && !valid {
					t.Fatalf("canonicalIPv4(%q) accepts what IsValidIP refuses", s)
				} else if !fast && valid {
					t.Fatalf("canonicalIPv4(%q) refuses a canonical IPv4 address", s)
				}
			}
			return
		}
		for _, p := range parts {
			if prefix == "" {
				grow(p, n-1)
			} else {
				grow(prefix+"."+p, n-1)
			}
		}
	}
	for n := 1; n <= 5; n++ {
		if n <= 4 {
			grow("", n)
			continue
		}
		// Five parts: enough of them to catch a fifth accepted.
		parts = []string{"0", "1", "255", "256", "01"}
		grow("", n)
	}
}
