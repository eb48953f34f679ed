package dirsource

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
)

// The decoder parses each document once into yaml.v3 nodes and writes JSON
// straight from them, where the earlier decoder went YAML → map → JSON →
// map → JSON. What a manifest means must not change with it: Kubernetes
// (kubectl, sigs.k8s.io/yaml) reads manifests as YAML 1.1, so the writer
// resolves plain scalars the 1.1 way where 1.2 differs (yes/no/on/off are
// booleans), turns timestamps into strings and keys into strings, expands
// merge keys, and refuses a key that a mapping repeats.

// parseYAML parses one document into its root node; nil for an empty one.
func parseYAML(data []byte) (*yamlv3.Node, error) {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yamlv3.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// maxExpansion bounds how much larger than its source a document may grow
// by expanding aliases, so that nested aliases cannot exhaust memory.
const maxExpansion = 64

// jsonWriter writes the JSON form of a node tree.
type jsonWriter struct {
	buf []byte
	// limit is the largest output allowed; aliases past it are an error.
	limit int
}

func newJSONWriter(src int) *jsonWriter {
	return &jsonWriter{buf: make([]byte, 0, src+src/4), limit: maxExpansion*src + 1<<20}
}

// toJSON returns the JSON of the document root n.
func toJSON(n *yamlv3.Node, srcLen int) ([]byte, error) {
	w := newJSONWriter(srcLen)
	if err := w.node(n, 0); err != nil {
		return nil, err
	}
	return w.buf, nil
}

// maxDepth bounds nesting, which a document of aliases could otherwise make
// unbounded through recursion.
const maxDepth = 10000

func (w *jsonWriter) node(n *yamlv3.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("yaml: line %d: document nested more than %d deep", n.Line, maxDepth)
	}
	switch n.Kind {
	case yamlv3.AliasNode:
		if len(w.buf) > w.limit {
			return fmt.Errorf("yaml: line %d: document contains excessive aliasing", n.Line)
		}
		return w.node(n.Alias, depth+1)
	case yamlv3.ScalarNode:
		return w.scalar(n)
	case yamlv3.SequenceNode:
		w.buf = append(w.buf, '[')
		for i, c := range n.Content {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if err := w.node(c, depth+1); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, ']')
		return nil
	case yamlv3.MappingNode:
		return w.mapping(n, depth)
	case yamlv3.DocumentNode:
		if len(n.Content) == 0 {
			w.buf = append(w.buf, "null"...)
			return nil
		}
		return w.node(n.Content[0], depth+1)
	}
	return fmt.Errorf("yaml: line %d: unexpected node", n.Line)
}

// pair is one entry of a mapping, its key already a string.
type pair struct {
	key   string
	value *yamlv3.Node
}

func (w *jsonWriter) mapping(n *yamlv3.Node, depth int) error {
	pairs, err := w.pairs(n, depth, nil)
	if err != nil {
		return err
	}
	w.buf = append(w.buf, '{')
	for i, p := range pairs {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = appendJSONString(w.buf, p.key)
		w.buf = append(w.buf, ':')
		if err := w.node(p.value, depth+1); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, '}')
	return nil
}

// pairs appends the entries of mapping n to into, in document order, as
// yaml.v2 reads them strictly: a key that is already there is an error,
// whether it came from the mapping or from one merged in with "<<".
func (w *jsonWriter) pairs(n *yamlv3.Node, depth int, into []pair) ([]pair, error) {
	if n.Kind == yamlv3.AliasNode {
		n = n.Alias
	}
	if n.Kind != yamlv3.MappingNode {
		return nil, fmt.Errorf("yaml: line %d: map merge requires map or sequence of maps as the value", n.Line)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("yaml: line %d: merges nested more than %d deep", n.Line, maxDepth)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yamlv3.ScalarNode && k.ShortTag() == "!!merge" {
			var err error
			if into, err = w.merge(v, depth, into); err != nil {
				return nil, err
			}
			continue
		}
		key, err := keyString(k)
		if err != nil {
			return nil, err
		}
		if find(into, key) >= 0 {
			return nil, fmt.Errorf("yaml: unmarshal errors:\n  line %d: key %q already set in map", k.Line, key)
		}
		into = append(into, pair{key, v})
	}
	return into, nil
}

// merge adds the keys of a "<<" value: a mapping or a list of them.
func (w *jsonWriter) merge(v *yamlv3.Node, depth int, into []pair) ([]pair, error) {
	if v.Kind == yamlv3.AliasNode {
		v = v.Alias
	}
	if v.Kind != yamlv3.SequenceNode {
		return w.pairs(v, depth+1, into)
	}
	for _, item := range v.Content {
		var err error
		if into, err = w.pairs(item, depth+1, into); err != nil {
			return nil, err
		}
	}
	return into, nil
}

func find(ps []pair, key string) int {
	for i := range ps {
		if ps[i].key == key {
			return i
		}
	}
	return -1
}

// keyString is a mapping key as sigs.k8s.io/yaml writes it to JSON: a
// string as is, any other scalar as its JSON text.
func keyString(k *yamlv3.Node) (string, error) {
	if k.Kind == yamlv3.AliasNode {
		k = k.Alias
	}
	if k.Kind != yamlv3.ScalarNode {
		return "", fmt.Errorf("yaml: line %d: invalid map key: a %s", k.Line, kindName(k))
	}
	v, isString, err := scalarJSON(k)
	if err != nil {
		return "", err
	}
	if isString {
		return k.Value, nil
	}
	return v, nil
}

func kindName(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.MappingNode:
		return "map"
	case yamlv3.SequenceNode:
		return "list"
	}
	return "node"
}

func (w *jsonWriter) scalar(n *yamlv3.Node) error {
	v, isString, err := scalarJSON(n)
	switch {
	case err != nil:
		return err
	case isString:
		w.buf = appendJSONString(w.buf, v)
	default:
		w.buf = append(w.buf, v...)
	}
	return nil
}

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans that YAML
// 1.2 (and so yaml.v3) reads as strings.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// scalarJSON returns the JSON text of a scalar, or the string itself and
// true when it is a string (so that the caller can escape it once).
func scalarJSON(n *yamlv3.Node) (string, bool, error) {
	tag := n.ShortTag()
	plain := n.Style&(yamlv3.TaggedStyle|yamlv3.SingleQuotedStyle|yamlv3.DoubleQuotedStyle|yamlv3.LiteralStyle|yamlv3.FoldedStyle) == 0
	switch tag {
	case "!!str":
		if plain {
			if b, ok := yaml11Bools[n.Value]; ok {
				return strconv.FormatBool(b), false, nil
			}
		}
		return n.Value, true, nil
	case "!!null":
		return "null", false, nil
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "true", "yes", "on", "y":
			return "true", false, nil
		case "false", "no", "off", "n":
			return "false", false, nil
		}
	case "!!int":
		if s, ok := intJSON(n.Value); ok {
			return s, false, nil
		}
		if s, ok := floatJSON(n.Value); ok {
			return s, false, nil // too large for an int64, as a float like YAML 1.1
		}
	case "!!float":
		if s, ok := floatJSON(n.Value); ok {
			return s, false, nil
		}
		return "", false, fmt.Errorf("yaml: line %d: %s: json: unsupported value", n.Line, n.Value)
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(n.Value), ""))
		if err != nil {
			return "", false, fmt.Errorf("yaml: line %d: !!binary value contains invalid base64 data", n.Line)
		}
		return string(b), true, nil
	}
	// Timestamps stay strings, as sigs.k8s.io/yaml keeps them, and so does
	// anything of a tag this writer does not resolve.
	return n.Value, true, nil
}

func intJSON(s string) (string, bool) {
	s = strings.ReplaceAll(s, "_", "")
	neg := false
	digits := s
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		neg, digits = digits[0] == '-', digits[1:]
	}
	base := 0
	if strings.HasPrefix(digits, "0o") {
		base, digits = 8, digits[2:]
	}
	u, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return "", false
	}
	if neg {
		if u > 1<<63 {
			return "", false
		}
		return "-" + strconv.FormatUint(u, 10), true
	}
	return strconv.FormatUint(u, 10), true
}

// floatJSON formats a float as encoding/json does, which is what reached
// the typed decoder before.
func floatJSON(s string) (string, bool) {
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.FormatFloat(f, format, -1, 64), true
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD, as encoding/json writes it.
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
