// Package jsonquote quotes strings exactly as encoding/json does, without
// its reflection: `render` prints every resource as JSON with it, and the
// DAG names each cluster after a hash of its spec's JSON, whose bytes must
// never change.
package jsonquote

import "unicode/utf8"

const lowerHex = "0123456789abcdef"

// Append appends s quoted as json.Marshal quotes it: with <, > and &
// escaped (its HTML escaping is on), \b \f \n \r \t \" \\ short, the other
// control characters as \u00XX, U+2028 and U+2029 as \u2028 and \u2029,
// and each byte of invalid UTF-8 as \ufffd. FuzzAppend holds it equal to
// encoding/json.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscape appends the escape of an ASCII byte that JSON, or
// encoding/json's HTML escaping, does not leave as it is.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
}
