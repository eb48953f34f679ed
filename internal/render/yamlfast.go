package render

import (
	"slices"
	"strconv"
	"strings"
)

// The YAML encoder (go.yaml.in/yaml/v2) spends most of the time of YAML
// output choosing how to print each scalar: plain, quoted or as a block,
// folded at 80 columns. Most of a resource is names, addresses, durations,
// numbers and nested maps, whose printing leaves it no choice; those are
// written here, and a resource holding anything else (a string with a
// space, a colon, a line break; a key to quote) goes to the encoder whole.
// The tests hold this to the encoder's bytes on every golden case and on
// mutated resources full of the strings it must leave alone.

// fastYAMLItem prints v as an item of a list at indent, as the encoder
// prints it there, and reports whether it could.
func fastYAMLItem(b []byte, v any, indent int) ([]byte, bool) {
	b = appendIndent(b, indent)
	b = append(b, '-')
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			return append(b, " {}\n"...), true
		}
		b = append(b, ' ')
		return fastYAMLMap(b, t, indent+2, true)
	case []any:
		if len(t) == 0 {
			return append(b, " []\n"...), true
		}
		return b, false // a list in a list: rare enough to leave to the encoder
	}
	b = append(b, ' ')
	b, ok := fastYAMLScalar(b, v)
	return append(b, '\n'), ok
}

// fastYAMLMap prints a map's entries at indent, the first on the current
// line when inline.
func fastYAMLMap(b []byte, m map[string]any, indent int, inline bool) ([]byte, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "@type" && !plainKey(k) {
			return b, false
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, yamlKeyCompare)
	ok := true
	for i, k := range keys {
		if i > 0 || !inline {
			b = appendIndent(b, indent)
		}
		if k == "@type" {
			b = append(b, "'@type'"...)
		} else {
			b = append(b, k...)
		}
		b = append(b, ':')
		switch t := m[k].(type) {
		case map[string]any:
			if len(t) == 0 {
				b = append(b, " {}\n"...)
				continue
			}
			b = append(b, '\n')
			b, ok = fastYAMLMap(b, t, indent+2, false)
		case []any:
			if len(t) == 0 {
				b = append(b, " []\n"...)
				continue
			}
			b = append(b, '\n')
			for _, e := range t {
				// A list in a map is not indented further.
				if b, ok = fastYAMLItem(b, e, indent); !ok {
					break
				}
			}
		default:
			b = append(b, ' ')
			b, ok = fastYAMLScalar(b, t)
			b = append(b, '\n')
		}
		if !ok {
			return b, false
		}
	}
	return b, true
}

func fastYAMLScalar(b []byte, v any) ([]byte, bool) {
	switch t := v.(type) {
	case string:
		if !plainValue(t) {
			return b, false
		}
		return append(b, t...), true
	case int:
		return strconv.AppendInt(b, int64(t), 10), true
	case float64:
		s := strconv.FormatFloat(t, 'g', -1, 64)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return append(b, s...), true
	case bool:
		return strconv.AppendBool(b, t), true
	case nil:
		return append(b, "null"...), true
	}
	return b, false
}

func appendIndent(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// plainChar is what a plain scalar may hold past its first character
// here: nothing the encoder quotes, folds or reads as an indicator.
func plainChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '.' || c == '/' || c == '-' || c == '+' || c == '='
}

// plainKey reports whether the encoder prints k as it is: it starts with
// a letter, holds only plainChar, is no YAML 1.1 boolean or null and is
// short enough to be a simple key.
func plainKey(k string) bool {
	return len(k) <= 128 && len(k) > 0 && isLetter(k[0]) && plainWord(k) && !yaml11Word(k)
}

// plainValue reports whether the encoder prints s as it is: plainChar
// only (or a host and port, hostPort), starting with a letter or a slash
// and not a word YAML 1.1 reads as a boolean or null, or shaped as an IPv4
// address or a duration ("2s", "0.250s"), which no YAML resolver reads as
// a number or a timestamp.
func plainValue(s string) bool {
	if s == "" || !plainWord(s) && !hostPort(s) {
		return false
	}
	switch c := s[0]; {
	case isLetter(c):
		return !yaml11Word(s)
	case c == '/':
		return true
	case '0' <= c && c <= '9':
		return ipv4Shaped(s) || durationShaped(s)
	}
	return false
}

// hostPort reports whether s is plainChar, a colon and then plainChar or
// "*": a virtual host's "example.com:*". A colon not followed by a space
// or the end of the value is no indicator, nor is a star past the start.
func hostPort(s string) bool {
	host, port, ok := strings.Cut(s, ":")
	return ok && host != "" && plainWord(host) && (port == "*" || port != "" && plainWord(port))
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func plainWord(s string) bool {
	for i := range len(s) {
		if !plainChar(s[i]) {
			return false
		}
	}
	return true
}

// yaml11Word reports the words, in any case, that YAML 1.1 resolves to a
// boolean or null.
func yaml11Word(s string) bool {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return true
	}
	return false
}

func ipv4Shaped(s string) bool {
	dots := 0
	for i := range len(s) {
		switch c := s[i]; {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return false
		}
	}
	return dots >= 2
}

func durationShaped(s string) bool {
	body, ok := strings.CutSuffix(s, "s")
	if !ok || body == "" {
		return false
	}
	whole, frac, dotted := strings.Cut(body, ".")
	return digits(whole) && (!dotted || digits(frac))
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// yamlKeyCompare orders map keys as the YAML encoder does: letters after
// other characters and by code point among themselves, runs of digits by
// their value, so that "a2" sorts before "a10". The keys here are ASCII
// (plainKey, "@type").
func yamlKeyCompare(a, b string) int {
	switch {
	case a == b:
		return 0
	case yamlKeyLess(a, b):
		return -1
	}
	return 1
}

func yamlKeyLess(a, b string) bool {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) < len(b)
	}
	ca, cb := a[i], b[i]
	switch la, lb := isLetter(ca), isLetter(cb); {
	case la && lb:
		return ca < cb
	case la != lb:
		return lb
	}
	// Neither is a letter. A zero where a number already began continues
	// that number, which then counts from one.
	carry := (ca == '0' || cb == '0') && nonzeroDigitBefore(a, i)
	va, ea := digitRun(a, i, carry)
	vb, eb := digitRun(b, i, carry)
	switch {
	case va != vb:
		return va < vb
	case ea != eb:
		return ea < eb
	}
	return ca < cb
}

// nonzeroDigitBefore reports whether the digits just before s[i] hold one
// that is not zero.
func nonzeroDigitBefore(s string, i int) bool {
	for j := i - 1; j >= 0 && isDigit(s[j]); j-- {
		if s[j] != '0' {
			return true
		}
	}
	return false
}

// digitRun returns the value of the digits from s[i] (starting from one
// when carry) and where they end.
func digitRun(s string, i int, carry bool) (int64, int) {
	var v int64
	if carry {
		v = 1
	}
	for ; i < len(s) && isDigit(s[i]); i++ {
		v = v*10 + int64(s[i]-'0')
	}
	return v, i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
