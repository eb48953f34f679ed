package dirsource

import (
	"bytes"
	"unsafe"

	yamlv3 "go.yaml.in/yaml/v3"
)

// The fast path writes the JSON of a document without building yaml.v3
// nodes, for the YAML that manifests are written in: block mappings and
// sequences, plain and quoted scalars on one line, literal and folded block
// scalars, comments and one-line flow collections of scalars. It writes
// the bytes toJSON writes for the same document, resolving scalars with
// the same code (scalarJSON), and declines everything else: anchors,
// aliases, tags, merge keys, complex keys, multi-line flow and plain
// scalars, tabs, non-ASCII bytes, odd indentation, and every document that
// has an error, so that yaml.v3 reads those and words their errors. A
// table test and a fuzz test hold the two paths equal wherever the fast one
// answers.

// fastDoc is what the fast path read from a document: its JSON and the
// apiVersion and kind of its top mapping, as headOfNode reads them.
type fastDoc struct {
	data       []byte
	apiVersion string
	kind       string
	seen       int // how many of apiVersion and kind are string scalars
}

// fastMaxDepth bounds nesting on the fast path; deeper documents (none
// that a person writes) go to yaml.v3, which has its own bound.
const fastMaxDepth = 100

// fastMaxKey is below the length at which yaml.v3 stops looking for the
// ':' of a key (1024), so that a key the fast path reads is one it reads.
const fastMaxKey = 1000

// fastScanner reads one document. Errors are never returned: ok turns
// false and the caller takes the yaml.v3 path.
type fastScanner struct {
	src []byte
	out []byte
	tmp []byte // a block scalar's value, or an escaped quoted one's, before JSON
	ok  bool

	// The current content line: [ls, le) without its newline, its number
	// from 1, and its indentation; eof once no content line is left.
	ls, le, no, indent int
	eof                bool

	keys  []span // the keys of the open mappings, in out
	depth int
	doc   fastDoc

	// last and lastText are where the last value scalar was written, and
	// its text, for noteHead.
	last     span
	lastText scalarText

	// heads are the plain apiVersion and kind values seen so far, kept
	// from document to document: a file repeats a handful of them.
	heads map[string]headText
}

// headText is a plain apiVersion or kind value, and whether yaml.v3 tags
// it as a string.
type headText struct {
	v     string
	isStr bool
}

// maxHeads bounds heads, for a file of endless made-up kinds.
const maxHeads = 64

// span is a range of out.
type span struct{ start, end int }

// fastJSON writes the JSON of a document whose root is a block mapping, in
// buf's storage; ok is false when the document is not in the subset.
func (s *fastScanner) fastJSON(src, buf []byte) (fastDoc, bool) {
	*s = fastScanner{src: src, out: buf[:0], tmp: s.tmp[:0], keys: s.keys[:0], ok: true, heads: s.heads}
	for _, c := range src {
		if (c < 0x20 && c != '\n') || c >= 0x7f {
			return fastDoc{}, false
		}
	}
	s.seek(0, 1)
	if s.eof || s.indent != 0 {
		return fastDoc{}, false
	}
	s.mapping(0)
	if !s.ok || !s.eof {
		return fastDoc{}, false
	}
	s.doc.data = s.out
	return s.doc, true
}

// seek makes the first content line at or after offset off (line no) the
// current one: blank and comment lines carry nothing.
func (s *fastScanner) seek(off, no int) {
	for off < len(s.src) {
		end := len(s.src)
		if i := bytes.IndexByte(s.src[off:], '\n'); i >= 0 {
			end = off + i
		}
		ind := 0
		for off+ind < end && s.src[off+ind] == ' ' {
			ind++
		}
		if off+ind < end && s.src[off+ind] != '#' {
			s.ls, s.le, s.no, s.indent = off, end, no, ind
			if ind == 0 && (s.src[off] == '%' || bytes.HasPrefix(s.src[off:end], []byte("---")) ||
				bytes.HasPrefix(s.src[off:end], []byte("..."))) {
				s.ok = false // a directive or a document marker: yaml.v3 decides
			}
			return
		}
		off, no = end+1, no+1
	}
	s.eof = true
	s.indent = -1
}

// next moves past the current line.
func (s *fastScanner) next() { s.seek(s.le+1, s.no+1) }

// at returns the byte at offset i of the current line, or 0 past its end.
func (s *fastScanner) at(i int) byte {
	if i < s.le {
		return s.src[i]
	}
	return 0
}

// isItem reports whether the current line is a sequence item at col.
func (s *fastScanner) isItem(col int) bool {
	i := s.ls + col
	return s.at(i) == '-' && (i+1 == s.le || s.src[i+1] == ' ')
}

func (s *fastScanner) enter() bool {
	s.depth++
	if s.depth > fastMaxDepth {
		s.ok = false
	}
	return s.ok
}

// mapping reads a block mapping whose keys are at column col, starting on
// the current line, up to the first line indented less.
func (s *fastScanner) mapping(col int) {
	if !s.enter() {
		return
	}
	defer func() { s.depth-- }()
	mark := len(s.keys)
	defer func() { s.keys = s.keys[:mark] }()
	s.out = append(s.out, '{')
	for first := true; ; first = false {
		if !first {
			s.out = append(s.out, ',')
		}
		raw, p, ok := s.key(s.ls + col)
		if !ok || !s.writeKey(raw, mark) {
			s.ok = false
			return
		}
		s.out = append(s.out, ':')
		// Read now: a quoted key's text may be in tmp, which the value reuses.
		head := s.depth == 1 && (string(raw.b) == "apiVersion" || string(raw.b) == "kind")
		isKind := string(raw.b) == "kind"
		start := len(s.out)
		p = s.skipSpaces(p)
		if p == s.le || s.src[p] == '#' {
			s.next()
			switch {
			case !s.eof && s.indent > col:
				s.block(s.indent)
			case !s.eof && s.indent == col && s.isItem(col):
				s.sequence(col)
			default:
				s.out = append(s.out, "null"...)
			}
		} else {
			s.inline(p, col)
		}
		if !s.ok {
			return
		}
		if head {
			s.noteHead(isKind, start)
		}
		switch {
		case s.eof || s.indent < col:
			s.out = append(s.out, '}')
			return
		case s.indent > col || s.isItem(col):
			s.ok = false
			return
		}
	}
}

// block reads the collection that starts on the current line at col.
func (s *fastScanner) block(col int) {
	if s.isItem(col) {
		s.sequence(col)
		return
	}
	s.mapping(col)
}

// sequence reads a block sequence whose dashes are at column col.
func (s *fastScanner) sequence(col int) {
	if !s.enter() {
		return
	}
	defer func() { s.depth-- }()
	s.out = append(s.out, '[')
	for first := true; ; first = false {
		if !first {
			s.out = append(s.out, ',')
		}
		p := s.skipSpaces(s.ls + col + 1)
		switch {
		case p == s.le || s.src[p] == '#':
			s.next()
			if !s.eof && s.indent > col {
				s.block(s.indent)
			} else {
				s.out = append(s.out, "null"...)
			}
		case s.src[p] == '-' && (p+1 == s.le || s.src[p+1] == ' '):
			s.ok = false // "- - a": rare enough to leave to yaml.v3
		default:
			if _, _, isKey := s.key(p); isKey {
				s.mapping(p - s.ls)
			} else {
				s.inline(p, col)
			}
		}
		if !s.ok {
			return
		}
		switch {
		case s.eof || s.indent < col || (s.indent == col && !s.isItem(col)):
			s.out = append(s.out, ']')
			return
		case s.indent > col:
			s.ok = false
			return
		}
	}
}

func (s *fastScanner) skipSpaces(p int) int {
	for p < s.le && s.src[p] == ' ' {
		p++
	}
	return p
}

// key reads the key of a mapping entry at p: the key's text as written
// (unquoted), whether it was quoted, and the offset past its ':'. ok is
// false when the line is not a simple key in the subset.
func (s *fastScanner) key(p int) (raw scalarText, after int, ok bool) {
	start := p
	switch c := s.at(p); {
	case c == '"' || c == '\'':
		raw, p, ok = s.quoted(p)
		if !ok {
			return raw, 0, false
		}
		p = s.skipSpaces(p)
	case !plainStart(c, s.at(p+1)) || c == '-':
		return raw, 0, false
	default:
		for ; p < s.le; p++ {
			c := s.src[p]
			if c == ':' && (p+1 == s.le || s.src[p+1] == ' ') {
				break
			}
			if c == '#' && s.src[p-1] == ' ' {
				return raw, 0, false
			}
		}
		end := p
		for end > start && s.src[end-1] == ' ' {
			end--
		}
		raw = scalarText{b: s.src[start:end], plain: true}
	}
	if s.at(p) != ':' || (p+1 < s.le && s.src[p+1] != ' ') || p-start > fastMaxKey {
		return raw, 0, false
	}
	return raw, p + 1, true
}

// scalarText is a scalar's value, and whether it was written plain (and so
// is resolved as a bool, number or null by its text).
type scalarText struct {
	b     []byte
	plain bool
}

// writeKey appends a key as JSON, refusing one the mapping already has:
// the yaml.v3 path words that error, with the line toJSON gives it.
func (s *fastScanner) writeKey(k scalarText, mark int) bool {
	if k.plain && string(k.b) == "<<" {
		return false // a merge key
	}
	start := len(s.out)
	if !s.scalar(k, true) {
		return false
	}
	key := s.out[start:]
	for _, o := range s.keys[mark:] {
		if bytes.Equal(s.out[o.start:o.end], key) {
			return false
		}
	}
	s.keys = append(s.keys, span{start, len(s.out)})
	return true
}

// inline reads the value that starts at p of the current line, in a
// collection at column col, and moves to the next content line.
func (s *fastScanner) inline(p, col int) {
	switch c := s.src[p]; c {
	case '|', '>':
		s.blockScalar(p, col)
		return
	case '[', '{':
		p = s.flow(p, 0)
	case '"', '\'':
		var v scalarText
		v, p, s.ok = s.quoted(p)
		s.ok = s.ok && s.scalar(v, false)
	default:
		if !plainStart(c, s.at(p+1)) {
			s.ok = false
			return
		}
		start := p
		for ; p < s.le; p++ {
			c := s.src[p]
			if c == ':' && (p+1 == s.le || s.src[p+1] == ' ') {
				s.ok = false // "a: b: c"
				return
			}
			if c == '#' && s.src[p-1] == ' ' {
				break
			}
		}
		end := p
		for s.src[end-1] == ' ' {
			end--
		}
		s.ok = s.scalar(scalarText{b: s.src[start:end], plain: true}, false)
	}
	if !s.ok || !s.endOfLine(p) {
		s.ok = false
		return
	}
	s.next()
}

// endOfLine reports whether only blanks and a comment follow p.
func (s *fastScanner) endOfLine(p int) bool {
	q := s.skipSpaces(p)
	return q == s.le || (s.src[q] == '#' && s.src[q-1] == ' ')
}

// plainStart reports whether c (followed by next) may start a plain
// scalar in block context: not an indicator, except "-" before a
// non-blank.
func plainStart(c, next byte) bool {
	switch c {
	case 0, ' ', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-':
		return next != 0 && next != ' '
	}
	return true
}

// quoted reads a quoted scalar at p that ends on the same line; the value
// of a double-quoted one with escapes is built in tmp.
func (s *fastScanner) quoted(p int) (scalarText, int, bool) {
	q := s.src[p]
	start := p + 1
	plainRun := true // no escapes so far: the value is a slice of src
	s.tmp = s.tmp[:0]
	for i := start; i < s.le; i++ {
		c := s.src[i]
		switch {
		case c == q && q == '\'' && i+1 < s.le && s.src[i+1] == '\'':
			if plainRun {
				s.tmp = append(s.tmp[:0], s.src[start:i]...)
				plainRun = false
			}
			s.tmp = append(s.tmp, '\'')
			i++
		case c == q:
			if plainRun {
				return scalarText{b: s.src[start:i]}, i + 1, true
			}
			return scalarText{b: s.tmp}, i + 1, true
		case c == '\\' && q == '"':
			if plainRun {
				s.tmp = append(s.tmp[:0], s.src[start:i]...)
				plainRun = false
			}
			e, n := unescape(s.src[i+1 : s.le])
			if n == 0 {
				return scalarText{}, 0, false
			}
			s.tmp = append(s.tmp, e)
			i += n
		default:
			if !plainRun {
				s.tmp = append(s.tmp, c)
			}
		}
	}
	return scalarText{}, 0, false // continues on the next line
}

// unescape reads the escape after a backslash: the byte it stands for and
// how many bytes it took, or 0 for one the fast path leaves to yaml.v3.
func unescape(b []byte) (byte, int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch b[0] {
	case '\\', '"', '\'':
		return b[0], 1
	case 'n':
		return '\n', 1
	case 't':
		return '\t', 1
	case 'r':
		return '\r', 1
	case '0':
		return 0, 1
	case 'x':
		if len(b) >= 3 {
			if h, l := unhex(b[1]), unhex(b[2]); h >= 0 && l >= 0 && h < 8 {
				return byte(h<<4 | l), 3
			}
		}
	}
	return 0, 0
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// scalar appends the JSON of a scalar (as a string when key is set, as
// keyString does). Plain text that cannot be anything but a string is
// written at once; the rest is resolved by scalarJSON, as on the yaml.v3
// path.
func (s *fastScanner) scalar(v scalarText, key bool) bool {
	if !key {
		s.last.start, s.lastText = len(s.out), v
		defer func() { s.last.end = len(s.out) }()
	}
	if !v.plain || plainString(v.b) {
		s.out = appendJSONString(s.out, bytesString(v.b))
		return true
	}
	if !key && decimal(v.b) {
		s.out = append(s.out, v.b...)
		return true
	}
	n := yamlv3.Node{Kind: yamlv3.ScalarNode, Value: string(v.b)}
	text, isString, err := scalarJSON(&n)
	switch {
	case err != nil:
		return false
	case isString || key:
		s.out = appendJSONString(s.out, text)
	default:
		s.out = append(s.out, text...)
	}
	return true
}

// plainString reports whether plain text resolves to a string: yaml.v3
// resolves only text that starts with a sign, a digit, '.', '~' or one of
// the letters of true, false, null, yes, no, on and off, and of those
// letters only these words.
func plainString(b []byte) bool {
	switch b[0] {
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return digitString(b)
	case '+', '-', '.', '~', '0':
		return false
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O':
		switch string(b) {
		case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL",
			"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
			"on", "On", "ON", "off", "Off", "OFF":
			return false
		}
	}
	return true
}

// digitString reports whether text that starts with a digit other than 0
// is a string to yaml.v3 (as addresses and durations are): made of
// letters, digits and dots, with a letter other than e or E (no number is
// written so) or with two dots (no float is), and without the '-' that
// every timestamp has.
func digitString(b []byte) bool {
	dots, letter := 0, false
	for _, c := range b {
		switch {
		case c == '.':
			dots++
		case c == 'e' || c == 'E' || ('0' <= c && c <= '9'):
		case ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
			letter = true
		default:
			return false
		}
	}
	return letter || dots >= 2
}

// decimal reports whether plain text is an int64 written in decimal with
// no sign, underscore or leading zero: its JSON is itself.
func decimal(b []byte) bool {
	if len(b) > 18 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// noteHead records apiVersion and kind of the top mapping when the value
// written from start is one scalar that yaml.v3 tags as a string, as gvkOf
// reads them.
func (s *fastScanner) noteHead(isKind bool, start int) {
	if s.last.start != start || s.last.end != len(s.out) {
		return
	}
	var v string
	if s.lastText.plain {
		h := s.plainHead(s.lastText.b)
		if !h.isStr {
			return
		}
		v = h.v
	} else {
		v = string(s.lastText.b)
	}
	if isKind {
		s.doc.kind = v
	} else {
		s.doc.apiVersion = v
	}
	s.doc.seen++
}

// plainHead resolves a plain apiVersion or kind value as yaml.v3 does.
func (s *fastScanner) plainHead(b []byte) headText {
	if h, ok := s.heads[string(b)]; ok {
		return h
	}
	v := string(b)
	h := headText{v: v, isStr: (&yamlv3.Node{Kind: yamlv3.ScalarNode, Value: v}).ShortTag() == "!!str"}
	if s.heads == nil {
		s.heads = make(map[string]headText)
	}
	if len(s.heads) < maxHeads {
		s.heads[v] = h
	}
	return h
}

// bytesString views b as a string without copying, for appendJSONString,
// which reads it and keeps nothing.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
