package dirsource

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// viaMap is the conversion the decoder used before it wrote JSON from
// nodes, and the one Kubernetes' own tools use: the oracle the node writer
// must agree with.
func viaMap(data []byte) (any, error) {
	var v any
	if err := utilyaml.UnmarshalStrict(data, &v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

func viaNodes(data []byte) (any, error) {
	root, err := parseYAML(data)
	if err != nil || root == nil {
		return nil, err
	}
	b, err := toJSON(root, len(data))
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

var yaml11Cases = []string{
	"a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: n\ng: 'yes'\nh: !!str on\n",
	"a: 0777\nb: 0x1F\nc: 1_000\nd: -12\ne: 1.5\nf: 1e3\ng: 80.0\nh: 12345678901234567890\n",
	"a: 2001-12-14\nb: 2001-12-14T21:59:43.10-05:00\nc: ~\nd: null\ne:\n",
	"base: &b {p: 1, q: 2}\nm:\n  <<: *b\n  q: 3\n",
	"base: &b {p: 1, q: 2}\nm:\n  q: 3\n  <<: *b\n",
	"base: &b {p: 1, q: 2}\nm:\n  <<: *b\n  r: 3\n",
	"b1: &b1 {p: 1}\nb2: &b2 {p: 2, q: 2}\nm:\n  <<: [*b1, *b2]\n",
	"a: &a [1, 2]\nb: *a\nc: {d: *a}\n",
	"1: one\ntrue: t\nyes: y\n",
	"s: \"tab\\there \\u00e9 \\\"q\\\" back\\\\slash\"\nl: |\n  line1\n  line2\nf: >\n  folded\n  text\n",
	"k: \"\\x01\\x1f\"\n",
	"list:\n- a\n- {b: [c, {d: e}]}\n",
}

// TestNodesAgreeWithMaps requires the node writer to read every case as
// sigs.k8s.io/yaml does (YAML 1.1 booleans, numbers, timestamps, merges,
// aliases, keys).
func TestNodesAgreeWithMaps(t *testing.T) {
	for _, c := range yaml11Cases {
		want, werr := viaMap([]byte(c))
		got, gerr := viaNodes([]byte(c))
		if (werr != nil) != (gerr != nil) {
			t.Errorf("%q: error %v, want %v", c, gerr, werr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c, got, want)
		}
	}
}

// TestNodesRefuse covers what the node writer must refuse: a repeated key
// (with its line) and aliases that expand without bound.
func TestNodesRefuse(t *testing.T) {
	if _, err := viaNodes([]byte("a: 1\nb: 2\na: 3\n")); err == nil || err.Error() != "yaml: unmarshal errors:\n  line 3: key \"a\" already set in map" {
		t.Errorf("repeated key: %v", err)
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += n + ": &" + n + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = n
	}
	if _, err := viaNodes([]byte(bomb)); err == nil {
		t.Error("alias bomb: no error")
	}
}

// FuzzNodesAgreeWithMaps checks the writer against the oracle on any
// document both read without error. Explicit tags are left out: the two
// parsers resolve some of them differently ("!" alone is null to yaml.v3
// and "" to yaml.v2), and manifests do not use them.
func FuzzNodesAgreeWithMaps(f *testing.F) {
	for _, c := range yaml11Cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.IndexByte(data, '!') >= 0 {
			return
		}
		want, werr := viaMap(data)
		got, gerr := viaNodes(data)
		if werr != nil || gerr != nil {
			return // the two parsers word (and draw) their errors differently
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
		}
	})
}
