package dirsource

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

// document is one YAML document of a file. Line is the 1-based line of the
// file on which data starts; leading blank and comment lines are dropped so
// that it points at the document's first real line.
type document struct {
	line int
	data []byte
}

var utf8BOM = []byte("\xef\xbb\xbf")

// splitDocuments cuts a file into documents at lines that are exactly "---"
// or "..." (optionally followed by blanks or a comment). Splitting here
// rather than in a YAML stream decoder is what lets every document, and
// every error in it, be located by line. Documents that hold only blanks and
// comments are dropped.
//
// YAML forbids "---" at the start of a line inside a document (even inside
// a quoted scalar), so this split agrees with a YAML stream parser.
func splitDocuments(data []byte) []document {
	data = bytes.TrimPrefix(data, utf8BOM)
	var (
		docs      []document
		start     = -1 // offset of the current document's first real line
		startLine int
		lineNo    int
	)
	for off := 0; off < len(data); {
		lineNo++
		end, next := len(data), len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			end, next = off+i, off+i+1
		}
		line := data[off:end]
		switch {
		case isSeparator(line):
			if start >= 0 {
				docs = append(docs, document{line: startLine, data: data[start:off]})
			}
			start = -1
		case start < 0 && !isBlankOrComment(line):
			start, startLine = off, lineNo
		}
		off = next
	}
	if start >= 0 {
		docs = append(docs, document{line: startLine, data: data[start:]})
	}
	return docs
}

// isSeparator reports whether a line is a document marker: "---" or "...",
// then nothing, or blanks and an optional comment.
func isSeparator(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if !bytes.HasPrefix(line, []byte("---")) && !bytes.HasPrefix(line, []byte("...")) {
		return false
	}
	rest := line[3:]
	if len(rest) == 0 {
		return true
	}
	if rest[0] != ' ' && rest[0] != '\t' {
		return false
	}
	rest = bytes.TrimLeft(rest, " \t")
	return len(rest) == 0 || rest[0] == '#'
}

// isBlankOrComment reports whether a line carries no YAML content. A
// directive ("%YAML 1.2") counts as none: it only matters to the parser
// when the document it belongs to follows "---", which this split drops.
func isBlankOrComment(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r")
	return len(line) == 0 || line[0] == '#' || line[0] == '%'
}

var yamlLineRef = regexp.MustCompile(`\bline (\d+)\b`)

// yamlMessage turns a YAML parser error into a one-line message whose line
// numbers count from the top of the file rather than from the document.
func yamlMessage(err error, first int) string {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = yamlLineRef.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(m[len("line "):])
		if err != nil || n < 1 || n > 1<<30 {
			return m
		}
		return "line " + strconv.Itoa(first+n-1)
	})
	return oneLine(msg)
}

// oneLine joins a multi-line message (yaml lists every error on its own
// indented line) so that a Problem prints on one line.
func oneLine(msg string) string {
	if !strings.Contains(msg, "\n") {
		return msg
	}
	parts := strings.Split(msg, "\n")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}
