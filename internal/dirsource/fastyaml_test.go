package dirsource

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
)

// slowDoc is what the yaml.v3 path reads from a document: the JSON that
// document() decodes and the head gvkOf is given; ok is false when that
// path would report a problem or skip the document instead.
func slowDoc(data []byte) (fastDoc, bool, error) {
	root, err := parseYAML(data)
	if err != nil {
		return fastDoc{}, false, err
	}
	if root == nil || root.ShortTag() != "!!map" {
		return fastDoc{}, false, nil
	}
	out, err := toJSON(root, len(data))
	if err != nil {
		return fastDoc{}, false, err
	}
	apiVersion, kind, seen := headOfNode(root)
	return fastDoc{data: out, apiVersion: apiVersion, kind: kind, seen: seen}, true, nil
}

// checkFast fails unless the fast path either declines data or reads it
// exactly as the yaml.v3 path does, and reports whether it answered.
func checkFast(t *testing.T, data []byte) bool {
	t.Helper()
	return checkFastWith(t, &fastScanner{}, data)
}

// checkFastWith is checkFast with a scanner that may have read other
// documents, as a file's scanner has.
func checkFastWith(t *testing.T, s *fastScanner, data []byte) bool {
	t.Helper()
	got, ok := s.fastJSON(data, nil)
	if !ok {
		return false
	}
	want, wantOK, err := slowDoc(data)
	switch {
	case err != nil || !wantOK:
		t.Fatalf("%q: the fast path read it as %s, yaml.v3 reads no object (%v)", data, got.data, err)
	case !bytes.Equal(got.data, want.data):
		t.Fatalf("%q:\nfast   %s\nyaml.v3 %s", data, got.data, want.data)
	case got.apiVersion != want.apiVersion || got.kind != want.kind || got.seen != want.seen:
		t.Fatalf("%q: head %q %q %d, yaml.v3 %q %q %d", data,
			got.apiVersion, got.kind, got.seen, want.apiVersion, want.kind, want.seen)
	}
	return true
}

// fastCases are documents the fast path must read, each equal to yaml.v3.
var fastCases = []string{
	proxyYAML,
	serviceYAML,
	"a: 1\nb: -2\nc: 0\nd: 012\ne: 1_000\nf: 1.5\ng: 1e3\nh: 0x1f\ni: 12345678901234567890\nj: +3\n",
	"a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: n\ng: true\nh: False\ni: ~\nj: null\nk:\nl: NULL\n",
	"a: 'yes'\nb: \"1\"\nc: 'it''s'\nd: \"q\\\"x\\\\y\\'z\\n\\t\\r\\x41\\0\"\ne: ''\nf: \"\"\n",
	"a: 10.0.0.1\nb: 30s\nc: 1h30m\nd: 1e5\ne: 1E5x\nf: 1.e3\ng: 12ab\nh: 1..2\ni: 2001.12.14\nj: 1.5e3\n",
	"a: 2001-12-14\nb: 2001-12-14T21:59:43.10-05:00\nc: 30s\nd: 1.2.3\ne: .5\nf: -.5\ng: .\n",
	"1: one\ntrue: t\noff: y\n~: n\n1.5: f\n\"q k\": v\n'x': y\nk e y : v\na:b: c\n",
	"url: http://example.com/a#frag\nx: a #comment\ny: [a]\nz: b[0]\nw: a,b\nv: -x\nu: a'b\"c\n",
	"# head\n\nk: v # tail\n\n  # indented comment\nm:\n  # inside\n  n: 1\n",
	"list:\n- a\n- 1\n-\n- b: 1\n  c: 2\n",
	"list:\n  - a\n  - b: [1, 2]\n    c:\n    - d\n    - e: {f: g}\nnext: 1\n",
	"m:\n  x:\n    y:\n      z: 1\n  w: 2\nn: 3\n",
	"e: []\nf: {}\ng: [ ]\nh: { }\ni: [a, \"b\", 'c', 1, true, null, [x], {k: v}]\nj: {a: 1, \"b\": [2], c: {d: e}}\n",
	"l: |\n  line1\n  line2\n\n  line4\nm: 1\n",
	"l: |-\n  a\n  b\n\n\nm: |+\n  c\n\n\nn: >\n  folded\n  text\n\n  para\no: >-\n  x\n  y\n",
	"l: |\n    deeper\n      more\n    back\n",
	"l: |\n  with trailing spaces   \n     \n  end\n",
	"p:\n- |\n  item\n- >\n  folded\n  item\nq: 1\n",
	"last: |+\n  keep\n\n",
	"noeol: |\n  x",
	"noeol: v",
	"b64: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJ2VENDQVdPZ0F3SUJBZ0lC\n",
	"a:\nb: ''\nc: {}\n",
	"k: \"tab\\there\"\nj: 'a # not a comment'\n",
	"c:\n- a:\n  - x\n  b: 1\n- |\n  lit\n- e: |-\n    in item\n  f: 2\n",
	"a: |\n  text\n# a comment less indented ends it\nb: |+\n  kept\n\n\n# comment\nc: >\n  one\n\n\n  two\n",
	"a: |+\n  x\n  ",
	"a: |\n  x\n\n",
	"a: >-\n  x\n\n\n",
	"a:\n  - [1, [2, {b: c d}]]\n  - {x: [], y: {}}\n  - {\"q\": 'r', n: -1, f: 1.5}\n",
	"a: 'single ''quoted'' # not a comment'   # a comment\nb: \"double \\\" # not either\" # a comment\n",
	"a:    \n  b: 1\nc:   # comment\n  - 1\n",
}

// TestFastPathAgrees holds the fast path to the yaml.v3 path on each case,
// and requires it to answer there, so that the cases test something.
func TestFastPathAgrees(t *testing.T) {
	for _, c := range fastCases {
		if !checkFast(t, []byte(c)) {
			t.Errorf("%q: the fast path declined", c)
		}
	}
}

// declineCases are documents the fast path must leave to yaml.v3: outside
// its subset, or with an error that yaml.v3 words.
var declineCases = []string{
	"a: &x 1\nb: *x\n",
	"a: !!str 1\n",
	"base: {p: 1}\nm:\n  <<: {q: 2}\n",
	"? complex\n: key\n",
	"%YAML 1.2\n---\na: 1\n",
	"a: multi\n  line plain\n",
	"a: \"multi\n  line\"\n",
	"a:\tb\n",
	"a: caf\xc3\xa9\n",
	"a: 1\na: 2\n",
	"a:\n  b: 1\n  b: 2\n",
	"a: b: c\n",
	"a: 1\n - b\n",
	"a:\n    b: 1\n  c: 2\n",
	"a: 1\n- b\n",
	"- a\n- b\n",
	"plain\n",
	"a: [1,\n  2]\n",
	"a: [1, 2,]\n",
	"a: .inf\n",
	"a: |\n\n  leading blank\n",
	"a: |2\n  explicit\n",
	"a: >\n  x\n    more indented\n",
	"a: \"\\u00e9\"\n",
	"\"" + strings.Repeat("k", 1100) + "\": v\n",
	"a: {b: 1, b: 2}\n",
	"a:\n  - x\n  b: 1\n",
	"a: 1 # c\n  b: 2\n",
	"l:\n- - x\n",
	"a: \"x\"#c\n",
	"a: |#c\n  x\n",
}

func TestFastPathDeclines(t *testing.T) {
	for _, c := range declineCases {
		var s fastScanner
		if got, ok := s.fastJSON([]byte(c), nil); ok {
			t.Errorf("%q: the fast path read it as %s", c, got.data)
		}
	}
}

// corpus is every manifest the repository has (testdata, examples) and
// what scalegen writes, split into documents: the seeds of the fuzz test,
// and a test of their own that nearly all of them take the fast path.
func corpus(t testing.TB) [][]byte {
	t.Helper()
	var docs [][]byte
	add := func(data []byte) {
		for _, d := range splitDocuments(data) {
			docs = append(docs, d.data)
		}
	}
	for _, root := range []string{"testdata", "../../examples", "../translator/testdata", "../dag/testdata"} {
		err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !isManifest(path) {
				return err
			}
			data, err := os.ReadFile(path)
			if err == nil {
				add(data)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return append(docs, generatedDocs(t, 20, 2)...)
}

// TestFastPathCorpus checks every document of the corpus, and that the
// fast path answers for most of them: a subset that declined real
// manifests would be proven equal and still be slow.
func TestFastPathCorpus(t *testing.T) {
	docs := corpus(t)
	// Heads repeated as plain and quoted text, and plain ones that are
	// not strings, read by one scanner after the corpus: what it keeps
	// from one document must not change how it reads the next.
	for _, h := range []string{"1", `"1"`, "yes", "'yes'", "~", "v1", `"v1"`, "2001-01-01", "Service"} {
		docs = append(docs, []byte("apiVersion: "+h+"\nkind: "+h+"\nmetadata: {name: a}\n"))
	}
	docs = append(docs, docs[len(docs)-9:]...)
	var s fastScanner
	fast := 0
	for _, d := range docs {
		if checkFastWith(t, &s, d) {
			fast++
		}
	}
	t.Logf("%d of %d documents took the fast path", fast, len(docs))
	if fast < len(docs)*85/100 {
		t.Errorf("only %d of %d documents took the fast path", fast, len(docs))
	}
}

// FuzzFastPath checks on any input that the fast path declines or agrees
// with yaml.v3 byte for byte.
func FuzzFastPath(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c))
	}
	for _, c := range declineCases {
		f.Add([]byte(c))
	}
	// A few small documents only: the fuzzer starts and mutates faster,
	// and TestFastPathCorpus checks every document as it is.
	seeds := 0
	for _, d := range corpus(f) {
		if len(d) <= 600 && seeds < 150 {
			f.Add(d)
			seeds++
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFast(t, data) })
}

// TestPlainStringAgrees compares plainString with yaml.v3's resolution on
// every text of up to five bytes over the bytes that numbers, timestamps
// and the YAML 1.1 words are made of.
func TestPlainStringAgrees(t *testing.T) {
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		if prefix != "" {
			v, isString, err := scalarJSON(&yamlv3.Node{Kind: yamlv3.ScalarNode, Value: prefix})
			if plainString([]byte(prefix)) && (err != nil || !isString || v != prefix) {
				t.Fatalf("plainString(%q) but yaml.v3 reads %q (string %v, %v)", prefix, v, isString, err)
			}
		}
		if n == 0 {
			return
		}
		for _, c := range "10.eEx_T:-+yno" {
			grow(prefix+string(c), n-1)
		}
	}
	grow("", 5)
}

// TestFastPathMutations checks every case edited at every byte (the byte
// dropped, doubled, or preceded by a space, a newline, a '#' or a ':'):
// the near misses where a scanner goes wrong, deterministically, on every
// run and not only under -fuzz.
func TestFastPathMutations(t *testing.T) {
	for _, c := range fastCases {
		for i := range len(c) {
			checkFast(t, []byte(c[:i]+c[i+1:]))
			checkFast(t, []byte(c[:i+1]+c[i:]))
			for _, ins := range []string{" ", "\n", "#", ":", "-", "'"} {
				checkFast(t, []byte(c[:i]+ins+c[i:]))
			}
		}
	}
}
