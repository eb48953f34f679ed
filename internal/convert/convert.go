// Package convert rewrites Contour manifests as Switchyard ones: the
// projectcontour.io API versions become switchyard.dev ones, annotations
// under projectcontour.io/ move to switchyard.dev/, and every field
// Switchyard's types do not have is left out and reported with its file
// and line, so that nothing is dropped silently. It backs `switchyard
// convert`.
//
// Field names are Contour's wherever the meaning is the same, so the
// conversion is mostly a rename; the few fields whose meaning differs are
// rewritten to keep Contour's behaviour (see rewrites.go).
package convert

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
)

// Warning is something of the input the output does not carry over, or
// carries over with another meaning.
type Warning struct {
	File    string
	Line    int
	Field   string
	Message string
}

func (w Warning) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", w.File, w.Line, w.Field, w.Message)
}

// kinds maps each Contour kind to its Switchyard API version and the Go
// type of its spec, which decides what is carried over.
var kinds = map[string]struct {
	apiVersion string
	spec       reflect.Type
}{
	"HTTPProxy":                {"switchyard.dev/v1", reflect.TypeFor[switchyardv1.HTTPProxySpec]()},
	"TLSCertificateDelegation": {"switchyard.dev/v1", reflect.TypeFor[switchyardv1.TLSCertificateDelegationSpec]()},
	"ExtensionService":         {"switchyard.dev/v1alpha1", reflect.TypeFor[switchyardv1alpha1.ExtensionServiceSpec]()},
}

const (
	contourGroup    = "projectcontour.io"
	switchyardGroup = "switchyard.dev"
)

// converter holds the warnings of one input stream.
type converter struct {
	file     string
	warnings []Warning
}

func (c *converter) warn(n *yaml.Node, field, format string, args ...any) {
	c.warnings = append(c.warnings, Warning{File: c.file, Line: n.Line, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Convert reads the YAML documents of one stream (file names it in the
// warnings) and returns them converted, in order, with the warnings. A
// document of a projectcontour.io kind Switchyard has no equivalent for
// is left out, with a warning; documents of other groups (Services,
// Secrets, ...) are kept, their projectcontour.io/ annotations renamed.
func Convert(file string, r io.Reader) ([]byte, []Warning, error) {
	c := &converter{file: file}
	dec := yaml.NewDecoder(r)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, c.warnings, fmt.Errorf("%s: %w", file, err)
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		if !c.document(doc.Content[0]) {
			continue
		}
		if err := enc.Encode(&doc); err != nil {
			return nil, c.warnings, fmt.Errorf("%s: %w", file, err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, c.warnings, err
	}
	sort.SliceStable(c.warnings, func(i, j int) bool { return c.warnings[i].Line < c.warnings[j].Line })
	return out.Bytes(), c.warnings, nil
}

// document converts one object in place; false drops it.
func (c *converter) document(obj *yaml.Node) bool {
	apiVersion, kind := value(obj, "apiVersion"), value(obj, "kind")
	group := ""
	if apiVersion != nil {
		group, _, _ = strings.Cut(apiVersion.Value, "/")
	}
	contour := group == contourGroup && kind != nil
	if contour && kind.Value == "HTTPProxy" {
		c.ingressClass(obj, value(obj, "spec"))
	}
	if meta := value(obj, "metadata"); meta != nil {
		c.annotations(value(meta, "annotations"))
	}
	if !contour {
		return true
	}
	k, ok := kinds[kind.Value]
	if !ok {
		c.warn(kind, "kind", "%s %s has no Switchyard equivalent; the document is left out", apiVersion.Value, kind.Value)
		return false
	}
	apiVersion.Value = k.apiVersion
	remove(obj, "status")
	if spec := value(obj, "spec"); spec != nil {
		c.walk(spec, k.spec, "spec")
		c.rewrite(kind.Value, spec)
	}
	return true
}

// annotations renames projectcontour.io/ keys, which Switchyard reads
// under switchyard.dev/ (or not at all: see knownAnnotations).
func (c *converter) annotations(m *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		rest, ok := strings.CutPrefix(k.Value, contourGroup+"/")
		if !ok {
			continue
		}
		k.Value = switchyardGroup + "/" + rest
		if !knownAnnotations[rest] {
			c.warn(k, "metadata.annotations."+contourGroup+"/"+rest, "renamed to %s, which Switchyard does not read", k.Value)
		}
	}
}

// walk leaves out of n every mapping key t (a spec type) has no JSON field
// for, with a warning naming its path, and descends into the others.
// Values of the wrong shape are left for the loader to report.
func (c *converter) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := jsonFields(t)
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				// Leaving out a false or null changes nothing: no warning.
				if !isNullOrFalse(v) {
					c.warn(k, path+"."+k.Value, "Switchyard has no such field; left out")
				}
				continue
			}
			kept = append(kept, k, v)
			c.walk(v, ft, path+"."+k.Value)
		}
		n.Content = kept
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, e := range n.Content {
			c.walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			c.walk(n.Content[i], t.Elem(), path+"."+n.Content[i-1].Value)
		}
	}
}

// jsonFields maps the JSON names of t's fields, inlined structs included,
// to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
		case name != "":
			out[name] = f.Type
		}
	}
	return out
}

// value returns the value of key in mapping m, or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// isNullOrFalse reports whether a YAML value is null or false.
func isNullOrFalse(v *yaml.Node) bool {
	return v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || (v.Tag == "!!bool" && v.Value == "false"))
}
