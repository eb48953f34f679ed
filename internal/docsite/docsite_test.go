package docsite

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLinks checks every relative link and anchor of README.md and site/.
func TestLinks(t *testing.T) {
	for _, p := range check(t, filepath.Join("..", "..")) {
		t.Error(p)
	}
}

// check runs Check on the pages of root.
func check(t *testing.T, root string) []Problem {
	t.Helper()
	pages, err := Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Check(root, pages)
	if err != nil {
		t.Fatal(err)
	}
	return problems
}

func TestLinksSkipCode(t *testing.T) {
	page := "see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d](d.md#x)\n"
	var got []string
	for _, l := range Links([]byte(page)) {
		got = append(got, l.Target)
		if page[l.Start:l.End] != l.Target {
			t.Errorf("offsets of %q name %q", l.Target, page[l.Start:l.End])
		}
	}
	if diff := cmp.Diff([]string{"a.md", "d.md#x"}, got); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}

func TestAnchors(t *testing.T) {
	page := "# Blue/green with a `standby`\n## Drain — a zone\n## Drain — a zone\n```\n# not a heading\n```\n#nospace\n"
	gh, mk := Anchors([]byte(page))
	wantGH := map[string]bool{"bluegreen-with-a-standby": true, "drain--a-zone": true, "drain--a-zone-1": true}
	wantMK := map[string]bool{"bluegreen-with-a-standby": true, "drain-a-zone": true, "drain-a-zone_1": true}
	if diff := cmp.Diff(wantGH, gh); diff != "" {
		t.Errorf("GitHub anchors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantMK, mk); diff != "" {
		t.Errorf("MkDocs anchors (-want +got):\n%s", diff)
	}
}

func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"README.md":      "[ok](site/a.md#two-words) [gone](site/nope.md) [anchor](site/a.md#nope) [dash](site/a.md#x--y)\n",
		"site/a.md":      "# Two words\n## x — y\n[up](../README.md) [out](../../x.md) [dir](../examples)\n",
		"examples/x.txt": "",
	}
	for name, body := range files {
		if err := write(filepath.Join(root, name), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, p := range check(t, root) {
		got = append(got, p.Link.Target)
	}
	want := []string{"site/nope.md", "site/a.md#nope", "site/a.md#x--y", "../../x.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestStageRewritesLinksOutOfSite(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	files := map[string]string{
		"README.md":           "[docs](site/index.md) [q](examples/q) `[code](examples/q)`\n",
		"site/index.md":       "[start](../README.md#quick-start) [ref](reference/api.md) [file](../go.mod) [here](#x)\n",
		"site/reference/a.md": "[back](../index.md)\n\n| a | b |\n|---|---|\n| `x \\| y` | u \\| v |\n",
		"site/mkdocs.yml":     "site_name: x\n",
		"examples/q/x.yaml":   "",
		"go.mod":              "",
	}
	for name, body := range files {
		if err := write(filepath.Join(root, name), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Stage(root, out, "https://example.com/r"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"getting-started.md": "[docs](index.md) [q](https://example.com/r/tree/main/examples/q) `[code](examples/q)`\n",
		"index.md":           "[start](getting-started.md#quick-start) [ref](reference/api.md) [file](https://example.com/r/blob/main/go.mod) [here](#x)\n",
		"reference/a.md":     "[back](../index.md)\n\n| a | b |\n|---|---|\n| `x | y` | u \\| v |\n",
	}
	got := map[string]string{}
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(out, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("staged site (-want +got):\n%s", diff)
	}
}

// navEntryRE matches a page of mkdocs.yml's nav: `- Title: page.md`.
var navEntryRE = regexp.MustCompile(`(?m)^\s*- [^:#]+: (\S+\.md)\s*$`)

// TestNav checks that site/mkdocs.yml's nav lists every page exactly
// once: MkDocs only logs a page left out, which then has no way in.
func TestNav(t *testing.T) {
	root := filepath.Join("..", "..")
	cfg, err := os.ReadFile(filepath.Join(root, SiteDir, "mkdocs.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var nav []string
	for _, m := range navEntryRE.FindAllSubmatch(cfg, -1) {
		nav = append(nav, string(m[1]))
	}
	pages, err := Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range pages {
		want = append(want, strings.TrimPrefix(stagedPath(p), SiteDir+"/"))
	}
	slices.Sort(nav)
	slices.Sort(want)
	if diff := cmp.Diff(want, nav); diff != "" {
		t.Errorf("site/mkdocs.yml nav (-pages +nav):\n%s", diff)
	}
}

func TestCheckBuilt(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"index.html":     `<a href="a.html#x">ok</a> <a href="a.html#y">no id</a> <script src="js/gone.js"></script> <a href="https://example.com/">ext</a> <a href="sub/">dir</a> <a href="#top" id="top">self</a>`,
		"a.html":         `<h2 id="x">X</h2> <link href="/css/s.css"> <a href="../up.html">out</a>`,
		"sub/index.html": `<a href="../index.html?q=1">back</a>`,
		"css/s.css":      `@font-face { src: url('../fonts/f.woff') } a { background: url(missing.png) }`,
		"fonts/f.woff":   ``,
	}
	for name, body := range files {
		if err := write(filepath.Join(dir, name), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := CheckBuilt(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a.html: ../up.html: leaves the site",
		"css/s.css: missing.png: no such file",
		"index.html: a.html#y: no element of a.html has this id",
		"index.html: js/gone.js: no such file",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
