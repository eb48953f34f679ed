package render

import (
	"strconv"

	"github.com/switchyard-dev/switchyard/internal/jsonquote"
)

// jsonWriter prints a sink's values as encoding/json's MarshalIndent with
// a two-space indent does (compact, as Marshal does, when indent is
// false), strings escaped as encoding/json escapes them, HTML characters
// included: the bytes render printed when its output went through
// encoding/json.
type jsonWriter struct {
	buf    []byte
	indent bool
	// depth is the nesting of the next line, counting the levels of the
	// document around what this writer prints.
	depth int
	// first says, per open object or array, whether it is still empty.
	first []bool
	// afterKey is set between a key and its value.
	afterKey bool
}

// elem starts a value: its comma and line, unless it follows its key.
func (w *jsonWriter) elem() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.buf = append(w.buf, ',')
		}
		w.first[n-1] = false
		w.newline()
	}
}

func (w *jsonWriter) newline() {
	if !w.indent {
		return
	}
	w.buf = append(w.buf, '\n')
	for range w.depth {
		w.buf = append(w.buf, ' ', ' ')
	}
}

func (w *jsonWriter) open(c byte) {
	w.elem()
	w.buf = append(w.buf, c)
	w.first = append(w.first, true)
	w.depth++
}

func (w *jsonWriter) close(c byte) {
	n := len(w.first)
	empty := w.first[n-1]
	w.first = w.first[:n-1]
	w.depth--
	if !empty {
		w.newline()
	}
	w.buf = append(w.buf, c)
}

func (w *jsonWriter) beginObject() { w.open('{') }
func (w *jsonWriter) endObject()   { w.close('}') }
func (w *jsonWriter) beginArray()  { w.open('[') }
func (w *jsonWriter) endArray()    { w.close(']') }

func (w *jsonWriter) key(k string) {
	w.elem()
	w.buf = jsonquote.Append(w.buf, k)
	w.buf = append(w.buf, ':')
	if w.indent {
		w.buf = append(w.buf, ' ')
	}
	w.afterKey = true
}

func (w *jsonWriter) str(s string) {
	w.elem()
	w.buf = jsonquote.Append(w.buf, s)
}

func (w *jsonWriter) number(lit []byte) {
	w.elem()
	w.buf = append(w.buf, lit...)
}

func (w *jsonWriter) boolean(b bool) {
	w.elem()
	w.buf = strconv.AppendBool(w.buf, b)
}

func (w *jsonWriter) null() {
	w.elem()
	w.buf = append(w.buf, "null"...)
}

// raw adds a value printed elsewhere, at this writer's depth.
func (w *jsonWriter) raw(b []byte) {
	w.elem()
	w.buf = append(w.buf, b...)
}

// treeSink collects a sink's values into the maps, slices and scalars the
// YAML encoder prints, typed as the YAML decoder types them when it reads
// the JSON output: numbers that are integers as int, other numbers as
// float64.
type treeSink struct {
	stack []treeFrame
	root  any
}

type treeFrame struct {
	obj map[string]any
	arr []any
	key string
}

func (t *treeSink) add(v any) {
	n := len(t.stack)
	if n == 0 {
		t.root = v
		return
	}
	if f := &t.stack[n-1]; f.obj != nil {
		f.obj[f.key] = v
	} else {
		f.arr = append(f.arr, v)
	}
}

func (t *treeSink) beginObject() { t.stack = append(t.stack, treeFrame{obj: map[string]any{}}) }
func (t *treeSink) beginArray()  { t.stack = append(t.stack, treeFrame{arr: []any{}}) }

func (t *treeSink) endObject() {
	f := t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
	t.add(f.obj)
}

func (t *treeSink) endArray() {
	f := t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
	t.add(f.arr)
}

func (t *treeSink) key(k string)      { t.stack[len(t.stack)-1].key = k }
func (t *treeSink) str(s string)      { t.add(s) }
func (t *treeSink) boolean(b bool)    { t.add(b) }
func (t *treeSink) null()             { t.add(nil) }
func (t *treeSink) number(lit []byte) { t.add(yamlNumber(string(lit))) }

// yamlNumber types a JSON number as the YAML decoder resolves it: int when
// it is an integer that fits, then uint64, then float64.
func yamlNumber(lit string) any {
	if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return int(i)
	}
	if u, err := strconv.ParseUint(lit, 10, 64); err == nil {
		return u
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return lit
	}
	return f
}
