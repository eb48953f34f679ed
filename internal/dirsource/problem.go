package dirsource

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Severity says whether a Problem left out something that was meant to be
// read (Error) or only something Switchyard does not read (Warning).
type Severity int

// The severities of a Problem. The zero value is neither, so that a Problem
// built without a severity is noticed.
const (
	// Warning: a document Switchyard does not read was skipped, such as a
	// Deployment in a directory shared with other tools.
	Warning Severity = iota + 1
	// Error: a document or file meant for Switchyard could not be read and
	// its objects are missing.
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	default:
		return "Severity(" + strconv.Itoa(int(s)) + ")"
	}
}

// Problem is one thing wrong with the input, located as precisely as the
// input allows, so that `render` and `serve` can print it the way a compiler
// prints an error.
type Problem struct {
	// File is the path of the file (or directory) as seen from the working
	// directory: the root joined with the path inside it.
	File string
	// Line is the 1-based line on which the document starts, 0 when the
	// problem is about the whole file or directory. Lines that a YAML error
	// names are rewritten in Message to count from the top of the file.
	Line int
	// Kind, Namespace and Name identify the object when they are known.
	// Kind is the manifest's kind, which may be one Switchyard does not read.
	Kind, Namespace, Name string
	Severity              Severity
	Message               string
}

// String renders the problem as "file:line: Kind namespace/name: message",
// leaving out what is not known.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p.Line))
	}
	b.WriteString(": ")
	if p.Kind != "" {
		b.WriteString(p.Kind)
		if p.Name != "" {
			b.WriteByte(' ')
			if p.Namespace != "" {
				b.WriteString(p.Namespace)
				b.WriteByte('/')
			}
			b.WriteString(p.Name)
		}
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// sortProblems orders problems by file (in walk order), line, object and
// message, so that output is the same from run to run.
func sortProblems(ps []Problem) {
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(
			pathCmp(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Message, b.Message),
			cmp.Compare(a.Severity, b.Severity),
		)
	})
}
