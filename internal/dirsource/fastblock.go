package dirsource

import "bytes"

// blockScalar reads a literal (|) or folded (>) block scalar whose header
// is at p, in a collection at column col, as yaml.v3 reads it: the
// indentation of its first line is its own, lines are joined by newlines
// (literal) or spaces (folded, where an empty line is a newline), and the
// chomping indicator keeps one final newline (clip), none (-) or all (+).
// Leading empty lines, an explicit indentation and folded lines indented
// further are declined.
func (s *fastScanner) blockScalar(p, col int) {
	literal := s.src[p] == '|'
	chomp := byte(0)
	p++
	if c := s.at(p); c == '-' || c == '+' {
		chomp = c
		p++
	}
	if !s.endOfLine(p) {
		s.ok = false
		return
	}
	s.tmp = s.tmp[:0]
	off, no := s.le+1, s.no+1
	indent, lines := -1, 0
	breaks := 0          // empty lines since the last content line
	endsInBreak := false // the last content line ends with a newline
	for off < len(s.src) {
		end, next := len(s.src), len(s.src)
		if i := bytes.IndexByte(s.src[off:], '\n'); i >= 0 {
			end, next = off+i, off+i+1
		}
		sp := 0
		for off+sp < end && s.src[off+sp] == ' ' {
			sp++
		}
		blank := off+sp == end
		switch {
		case indent < 0 && (blank || sp <= col):
			s.ok = false // leading empty lines, or no content
			return
		case indent < 0:
			indent = sp
		case blank && sp <= indent:
			if next > end {
				breaks++
			}
			off, no = next, no+1
			continue
		case sp < indent:
			s.endBlock(literal, chomp, breaks, endsInBreak)
			s.seek(off, no)
			return
		}
		line := s.src[off+indent : end]
		if !literal && line[0] == ' ' {
			s.ok = false
			return
		}
		if lines > 0 {
			switch {
			case literal:
				s.tmp = append(s.tmp, '\n')
				s.tmp = appendBreaks(s.tmp, breaks)
			case breaks == 0:
				s.tmp = append(s.tmp, ' ')
			default:
				s.tmp = appendBreaks(s.tmp, breaks)
			}
		}
		s.tmp = append(s.tmp, line...)
		breaks, endsInBreak = 0, next > end
		lines++
		off, no = next, no+1
	}
	if indent < 0 {
		s.ok = false
		return
	}
	s.endBlock(literal, chomp, breaks, endsInBreak)
	s.seek(off, no)
}

// endBlock chomps the value in tmp and writes it.
func (s *fastScanner) endBlock(literal bool, chomp byte, breaks int, endsInBreak bool) {
	if chomp != '-' && endsInBreak {
		s.tmp = append(s.tmp, '\n')
	}
	if chomp == '+' {
		s.tmp = appendBreaks(s.tmp, breaks)
	}
	s.ok = s.scalar(scalarText{b: s.tmp}, false)
}

func appendBreaks(b []byte, n int) []byte {
	for range n {
		b = append(b, '\n')
	}
	return b
}

// flowMaxDepth bounds nested flow collections on the fast path.
const flowMaxDepth = 16

// flow reads a flow sequence or mapping at p that closes on the same
// line, of quoted scalars, plain ones of letters, digits and "._/+-", and
// nested flow collections; it returns the offset past its end.
func (s *fastScanner) flow(p, depth int) int {
	open := s.src[p]
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	if depth > flowMaxDepth {
		s.ok = false
		return p
	}
	mark := len(s.keys)
	defer func() { s.keys = s.keys[:mark] }()
	s.out = append(s.out, open)
	p = s.skipSpaces(p + 1)
	if s.at(p) == closing {
		s.out = append(s.out, closing)
		return p + 1
	}
	for first := true; ; first = false {
		if !first {
			s.out = append(s.out, ',')
		}
		if open == '{' {
			k, q, ok := s.flowScalar(p)
			if !ok || s.at(q) != ':' || s.at(q+1) != ' ' || !s.writeKey(k, mark) {
				s.ok = false
				return p
			}
			s.out = append(s.out, ':')
			p = s.skipSpaces(q + 1)
		}
		if c := s.at(p); c == '[' || c == '{' {
			p = s.flow(p, depth+1)
		} else {
			var v scalarText
			v, p, s.ok = s.flowScalar(p)
			s.ok = s.ok && s.scalar(v, false)
		}
		if !s.ok {
			return p
		}
		p = s.skipSpaces(p)
		switch s.at(p) {
		case ',':
			p = s.skipSpaces(p + 1)
			if c := s.at(p); c == closing || c == ',' {
				s.ok = false // a trailing or empty entry
				return p
			}
		case closing:
			s.out = append(s.out, closing)
			return p + 1
		default:
			s.ok = false
			return p
		}
	}
}

// flowScalar reads a scalar inside a flow collection at p.
func (s *fastScanner) flowScalar(p int) (scalarText, int, bool) {
	if c := s.at(p); c == '"' || c == '\'' {
		return s.quoted(p)
	}
	start := p
	if c := s.at(p); !isAlnum(c) && c != '/' && (c != '-' || !isAlnum(s.at(p+1))) {
		return scalarText{}, p, false
	}
	// Words separated by single spaces are one scalar, as in "{a: b c}".
	for p < s.le && (flowSafe(s.src[p]) || (s.src[p] == ' ' && flowSafe(s.at(p+1)))) {
		p++
	}
	return scalarText{b: s.src[start:p], plain: true}, p, true
}

func flowSafe(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '/' || c == '+' || c == '-'
}

func isAlnum(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
