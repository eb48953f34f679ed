package docsite

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// SiteDir is the documentation's directory in the repository.
const SiteDir = "site"

// readmeAs is where README.md goes on the built site: its quick start is
// the site's getting-started page, kept in one place.
const readmeAs = "getting-started.md"

// Pages returns the repository paths (slash-separated, relative to root)
// of the Markdown pages the checks and the site cover: README.md and every
// .md file under site/.
func Pages(root string) ([]string, error) {
	pages := []string{"README.md"}
	err := fs.WalkDir(os.DirFS(root), SiteDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return nil
	})
	return pages, err
}

// Problem is a link that does not resolve.
type Problem struct {
	Page string
	Link Link
	Why  string
}

// String formats p as page:line: target: why.
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.Page, p.Link.Line, p.Link.Target, p.Why)
}

// Check returns the links of pages (repository paths under root) that do
// not resolve: a relative link must name a file or directory of the
// repository, and an anchor must name a heading of its Markdown page under
// both GitHub's and MkDocs's naming.
func Check(root string, pages []string) ([]Problem, error) {
	var problems []Problem
	anchors := map[string][2]map[string]bool{}
	for _, page := range pages {
		src, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(src) {
			if external(l.Target) {
				continue
			}
			target, anchor, _ := strings.Cut(l.Target, "#")
			resolved := page
			if target != "" {
				resolved = path.Join(path.Dir(page), target)
			}
			if resolved == ".." || strings.HasPrefix(resolved, "../") {
				problems = append(problems, Problem{page, l, "leaves the repository"})
				continue
			}
			if _, err := os.Stat(filepath.Join(root, resolved)); err != nil {
				problems = append(problems, Problem{page, l, "no such file or directory"})
				continue
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(resolved, ".md") {
				problems = append(problems, Problem{page, l, "an anchor in a file that is not Markdown"})
				continue
			}
			a, ok := anchors[resolved]
			if !ok {
				b, err := os.ReadFile(filepath.Join(root, resolved))
				if err != nil {
					return nil, err
				}
				gh, mk := Anchors(b)
				a = [2]map[string]bool{gh, mk}
				anchors[resolved] = a
			}
			switch {
			case !a[0][anchor] && !a[1][anchor]:
				problems = append(problems, Problem{page, l, "no heading of " + resolved + " has this anchor"})
			case !a[0][anchor]:
				problems = append(problems, Problem{page, l, "the anchor works on the built site but not on GitHub"})
			case !a[1][anchor]:
				problems = append(problems, Problem{page, l, "the anchor works on GitHub but not on the built site (MkDocs names the heading differently)"})
			}
		}
	}
	return problems, nil
}

// external reports whether a link target is not a path in the repository.
func external(target string) bool {
	return strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "/")
}

// Stage copies the site's pages and files from root into out, for MkDocs,
// whose docs directory cannot be the directory holding its configuration
// (site/mkdocs.yml, which is not copied). README.md becomes
// getting-started.md. Links to the repository outside site/ become links
// to repoURL (such as https://github.com/OWNER/NAME), so that they
// resolve on the built site as they do on GitHub.
func Stage(root, out, repoURL string) error {
	pages, err := Pages(root)
	if err != nil {
		return err
	}
	err = fs.WalkDir(os.DirFS(root), SiteDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") || p == SiteDir+"/mkdocs.yml" {
			return err
		}
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return err
		}
		return write(filepath.Join(out, strings.TrimPrefix(p, SiteDir+"/")), b)
	})
	if err != nil {
		return err
	}
	for _, page := range pages {
		src, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return err
		}
		staged := stagedPath(page)
		rewritten := unescapeTablePipes(rewrite(root, page, staged, src, repoURL))
		if err := write(filepath.Join(out, strings.TrimPrefix(staged, SiteDir+"/")), rewritten); err != nil {
			return err
		}
	}
	return nil
}

// stagedPath is where a page sits on the site, as a repository path.
func stagedPath(page string) string {
	if page == "README.md" {
		return SiteDir + "/" + readmeAs
	}
	return page
}

// rewrite returns src, a page read from repository path page and staged at
// repository path staged, with each relative link pointing where it
// resolves from staged: at another staged page, or into the repository.
func rewrite(root, page, staged string, src []byte, repoURL string) []byte {
	var b strings.Builder
	last := 0
	for _, l := range Links(src) {
		if external(l.Target) {
			continue
		}
		target, anchor, hasAnchor := strings.Cut(l.Target, "#")
		if target == "" {
			continue
		}
		resolved := path.Join(path.Dir(page), target)
		var to string
		if inSite(resolved) || resolved == "README.md" {
			to = relative(path.Dir(staged), stagedPath(resolved))
		} else {
			kind := "blob"
			if fi, err := os.Stat(filepath.Join(root, resolved)); err == nil && fi.IsDir() {
				kind = "tree"
			}
			to = repoURL + "/" + kind + "/main/" + resolved
		}
		if hasAnchor {
			to += "#" + anchor
		}
		b.Write(src[last:l.Start])
		b.WriteString(to)
		last = l.End
	}
	b.Write(src[last:])
	return []byte(b.String())
}

// unescapeTablePipes turns `\|` back into `|` inside the code spans of
// table rows. GitHub needs the backslash there, or the pipe ends the cell;
// Python-Markdown never splits a cell inside a code span, and would show
// the backslash.
func unescapeTablePipes(src []byte) []byte {
	lines := strings.SplitAfter(string(src), "\n")
	fenced := false
	for i, line := range lines {
		if isFence([]byte(line)) {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "|") {
			continue
		}
		var b strings.Builder
		in := false
		for j := 0; j < len(line); j++ {
			switch {
			case line[j] == '`':
				in = !in
			case in && line[j] == '\\' && j+1 < len(line) && line[j+1] == '|':
				continue
			}
			b.WriteByte(line[j])
		}
		lines[i] = b.String()
	}
	return []byte(strings.Join(lines, ""))
}

func inSite(p string) bool { return strings.HasPrefix(p, SiteDir+"/") }

// relative returns the slash path of to seen from the directory from.
func relative(from, to string) string {
	r, err := filepath.Rel(filepath.FromSlash(from), filepath.FromSlash(to))
	if err != nil {
		return to
	}
	return filepath.ToSlash(r)
}

func write(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, b, 0o644)
}
