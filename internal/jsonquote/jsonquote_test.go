package jsonquote

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// seeds are strings of every class Append treats apart: plain ASCII, the
// short escapes, other control characters, HTML's <, > and &, the line and
// paragraph separators, invalid and valid multi-byte UTF-8.
var seeds = []string{
	"", "a", "team-0042", "/", "+",
	`"`, `\`, `<`, `>`, `&`, `</script>&amp;`,
	"\x00", "\x01\x1f", "\x7f", "\b\f\n\r\t",
	"\u2028", "\u2029", "a\u2028b\u2029c",
	"\xff", "\xe2\x80", "a\xc3", "\xed\xa0\x80", "é✓𝄞", "\ufffd",
}

// FuzzAppend: Append quotes any string, valid UTF-8 or not, exactly as
// json.Marshal does, after whatever the buffer already held.
func FuzzAppend(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add(strings.Join(seeds, ""))
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Append([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("%q: got %s, want %s", s, got[1:], want)
		}
	})
}
