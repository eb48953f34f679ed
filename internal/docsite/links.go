// Package docsite keeps the documentation honest: it finds the links of the
// Markdown pages under site/ and of README.md, checks that each relative
// link and anchor resolves (TestLinks, run by `make test`), and stages the
// pages for MkDocs (`make docs`), rewriting links that leave site/ into
// links to the repository, where they resolve on the built site too.
//
// It reads Markdown the way both renderers agree on: inline links
// `[text](target)` and images outside code spans and fenced blocks, ATX
// headings for anchors. It is not a Markdown parser, and the pages keep to
// that subset (no reference-style links, no setext headings).
package docsite

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Link is one inline link of a page.
type Link struct {
	// Target is the link's destination as written, anchor included.
	Target string
	// Start and End are the byte offsets of Target in the page.
	Start, End int
	// Line is the 1-based line of the link, for messages.
	Line int
}

// linkRE matches the `](target)` half of an inline link or image; the
// target has no spaces and no title, as on every page here.
var linkRE = regexp.MustCompile(`\]\(([^()\s]+)\)`)

// Links returns the inline links of page, skipping fenced code blocks and
// code spans, where `](x)` is code and not a link.
func Links(page []byte) []Link {
	var links []Link
	offset, fenced := 0, false
	for i, line := range bytes.SplitAfter(page, []byte("\n")) {
		if isFence(line) {
			fenced = !fenced
		} else if !fenced {
			masked := maskCodeSpans(line)
			for _, m := range linkRE.FindAllSubmatchIndex(masked, -1) {
				links = append(links, Link{
					Target: string(line[m[2]:m[3]]),
					Start:  offset + m[2],
					End:    offset + m[3],
					Line:   i + 1,
				})
			}
		}
		offset += len(line)
	}
	return links
}

func isFence(line []byte) bool {
	t := bytes.TrimLeft(line, " ")
	return bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~"))
}

// maskCodeSpans returns line with the contents of its code spans blanked,
// keeping offsets.
func maskCodeSpans(line []byte) []byte {
	out := bytes.Clone(line)
	in := false
	for i, c := range out {
		if c == '`' {
			in = !in
		} else if in {
			out[i] = ' '
		}
	}
	return out
}

// Anchors returns the anchors of page's headings as GitHub names them and
// as MkDocs (Python-Markdown's toc extension) names them. A link must name
// an anchor both know, so that it works on GitHub and on the built site.
func Anchors(page []byte) (github, mkdocs map[string]bool) {
	github, mkdocs = map[string]bool{}, map[string]bool{}
	fenced := false
	for _, line := range strings.Split(string(page), "\n") {
		if isFence([]byte(line)) {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		text, ok := heading(line)
		if !ok {
			continue
		}
		github[unique(github, githubSlug(text), "-")] = true
		mkdocs[unique(mkdocs, mkdocsSlug(text), "_")] = true
	}
	return github, mkdocs
}

// unique numbers repeated slugs the way each renderer does: GitHub appends
// -1, -2, ..., Python-Markdown _1, _2, ...
func unique(seen map[string]bool, slug, sep string) string {
	if !seen[slug] {
		return slug
	}
	for n := 1; ; n++ {
		s := slug + sep + strconv.Itoa(n)
		if !seen[s] {
			return s
		}
	}
}

// heading returns the text of an ATX heading line, with inline markup that
// neither renderer keeps in the slug removed.
func heading(line string) (string, bool) {
	t := strings.TrimLeft(line, "#")
	if n := len(line) - len(t); n == 0 || n > 6 || (t != "" && t[0] != ' ') {
		return "", false
	}
	t = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t), "#"))
	t = linkTextRE.ReplaceAllString(t, "$1")
	return strings.NewReplacer("`", "", "*", "").Replace(t), true
}

var linkTextRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// githubSlug is GitHub's heading anchor: lowercase, punctuation other than
// '-' and '_' dropped, each space a '-'.
func githubSlug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mkdocsSlug is Python-Markdown's toc slugify: non-ASCII and punctuation
// other than '-' and '_' dropped, lowercase, runs of spaces and '-' one '-'.
func mkdocsSlug(text string) string {
	var b strings.Builder
	for _, r := range text {
		if r < unicode.MaxASCII && (r == ' ' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return dashRunRE.ReplaceAllString(strings.TrimSpace(b.String()), "-")
}

var dashRunRE = regexp.MustCompile(`[-\s]+`)
