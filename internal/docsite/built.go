package docsite

import (
	"io/fs"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
)

var (
	// refRE finds the links of built HTML: hrefs and srcs.
	refRE = regexp.MustCompile(`\b(?:href|src)="([^"]*)"`)
	// cssRefRE finds the files a stylesheet loads.
	cssRefRE = regexp.MustCompile(`url\(\s*['"]?([^'")]+)['"]?\s*\)`)
	// idRE finds the anchors of built HTML.
	idRE = regexp.MustCompile(`\b(?:id|name)="([^"]*)"`)
)

// CheckBuilt returns the links of the built site in dir that do not
// resolve within it: pages, anchors, and the theme's scripts, stylesheets
// and fonts. It catches what checking the Markdown cannot: an anchor MkDocs
// named otherwise than expected, or a theme that refers to files its
// package does not ship (Debian's readthedocs theme does).
func CheckBuilt(dir string) ([]string, error) {
	site := os.DirFS(dir)
	ids := map[string][]string{}
	refs := map[string][]string{}
	err := fs.WalkDir(site, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var re *regexp.Regexp
		switch path.Ext(p) {
		case ".html":
			re = refRE
		case ".css":
			re = cssRefRE
		default:
			return nil
		}
		b, err := fs.ReadFile(site, p)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			refs[p] = append(refs[p], string(m[1]))
		}
		for _, m := range idRE.FindAllSubmatch(b, -1) {
			ids[p] = append(ids[p], string(m[1]))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, from := range slices.Sorted(maps.Keys(refs)) {
		for _, ref := range refs[from] {
			if why := resolveBuilt(site, ids, from, ref); why != "" {
				problems = append(problems, from+": "+ref+": "+why)
			}
		}
	}
	return problems, nil
}

// resolveBuilt says why ref, a link of the file from, does not resolve in
// site, or "" when it does.
func resolveBuilt(site fs.FS, ids map[string][]string, from, ref string) string {
	if strings.Contains(ref, "://") || strings.HasPrefix(ref, "//") || (strings.Contains(ref, ":") && !strings.Contains(ref, "/")) {
		return "" // another site, mailto:, data:, javascript:
	}
	ref, _, _ = strings.Cut(ref, "?")
	target, anchor, _ := strings.Cut(ref, "#")
	p := from
	switch {
	case strings.HasPrefix(target, "/"):
		p = path.Clean(strings.TrimPrefix(target, "/"))
	case target != "":
		p = path.Join(path.Dir(from), target)
	}
	if strings.HasSuffix(target, "/") || p == "." {
		p = path.Join(p, "index.html")
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return "leaves the site"
	}
	if _, err := fs.Stat(site, p); err != nil {
		return "no such file"
	}
	if anchor != "" && path.Ext(p) == ".html" && !slices.Contains(ids[p], anchor) {
		return "no element of " + p + " has this id"
	}
	return ""
}
