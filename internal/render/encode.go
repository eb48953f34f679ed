package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	yamlv2 "go.yaml.in/yaml/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// flushAt is how much output EncodeTo holds before writing it out.
const flushAt = 1 << 16

// EncodeOptions adjust what EncodeTo prints.
type EncodeOptions struct {
	// StatusesNote, when set, is printed in YAML output as a comment on
	// the line above the statuses. JSON has no comments: it is ignored.
	StatusesNote string
}

// Encode prints the output as "yaml" or "json". Private keys are redacted:
// render output ends up in terminals, tickets and golden files.
func (o *Output) Encode(format string) ([]byte, error) {
	var b bytes.Buffer
	if err := o.EncodeTo(&b, format, EncodeOptions{}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// EncodeTo prints the output as Encode does, to w as it goes: the
// resources are printed on every core, written in order, and never held
// as one document. An error once output has started leaves it truncated.
func (o *Output) EncodeTo(w io.Writer, format string, opts EncodeOptions) error {
	switch format {
	case "json":
		return o.encodeJSON(w)
	case "", "yaml":
		return o.encodeYAML(w, opts)
	}
	return fmt.Errorf("unknown output format %q: use yaml or json", format)
}

// item is one resource of the document, decoded or not, with the index
// of its type.
type item struct {
	typ int
	msg proto.Message
	res *xdsres.Resource
}

func (it item) message() (protoreflect.Message, error) {
	if it.msg != nil {
		return it.msg.ProtoReflect(), nil
	}
	m, err := decoded(it.res)
	if err != nil {
		return nil, err
	}
	return m.ProtoReflect(), nil
}

// items lists the resources in the order printed: type URLs sorted,
// empty types left out, each type's resources in wire order.
func (o *Output) items() (types []string, all []item) {
	for url, ms := range o.Resources {
		if len(ms) > 0 {
			types = append(types, url)
		}
	}
	for url, rs := range o.encoded {
		if len(rs) > 0 && len(o.Resources[url]) == 0 {
			types = append(types, url)
		}
	}
	slices.Sort(types)
	for i, url := range types {
		for _, m := range o.Resources[url] {
			all = append(all, item{typ: i, msg: m})
		}
		for _, r := range o.encoded[url] {
			all = append(all, item{typ: i, res: r})
		}
	}
	return types, all
}

// walkers are reused from one resource to the next, so that their
// scratch stacks grow once per worker, not once per resource.
var walkers = sync.Pool{New: func() any { return &walker{} }}

// printItem prints one resource to a sink: from its encoding when the
// wire walker can, otherwise, after reset empties the sink, decoded.
func printItem(s sink, reset func(), it item, types []string) error {
	w := walkers.Get().(*walker)
	defer walkers.Put(w)
	w.s = s
	defer func() { w.s = nil }()
	if it.res != nil {
		if w.fastResource(it.res) {
			return nil
		}
		reset()
	}
	m, err := it.message()
	if err == nil {
		err = w.message(m)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", types[it.typ], err)
	}
	return nil
}

func (o *Output) statusDocs() []statusDoc {
	docs := make([]statusDoc, 0, len(o.Statuses))
	for _, st := range o.Statuses {
		docs = append(docs, statusDoc{
			Kind: st.Key.Kind.String(), Namespace: st.Key.Namespace, Name: st.Key.Name,
			CurrentStatus: st.State, Description: st.Description, Errors: st.Errors, Warnings: st.Warnings,
			Programmed: ProgrammedOf(o.Programmed, st.Key),
		})
	}
	return docs
}

// flusher writes out what a buffer holds once it is large.
type flusher struct {
	w   io.Writer
	err error
}

func (f *flusher) write(b []byte) []byte {
	if f.err == nil {
		_, f.err = f.w.Write(b)
	}
	return b[:0]
}

func (o *Output) encodeJSON(w io.Writer) error {
	types, all := o.items()
	out := &flusher{w: w}
	doc := &jsonWriter{indent: true}
	doc.beginObject()
	doc.key("resources")
	doc.beginObject()
	current := -1
	free := newBuffers()
	err := inOrder(len(all), func(i int) ([]byte, error) {
		// The writer's depth is where a resource sits in the document:
		// under resources, its type URL and the type's list.
		jw := &jsonWriter{indent: true, depth: 3, buf: free.sized(all[i])}
		err := printItem(jw, func() { jw.buf, jw.first, jw.depth, jw.afterKey = jw.buf[:0], jw.first[:0], 3, false }, all[i], types)
		return jw.buf, err
	}, func(i int, b []byte) error {
		if t := all[i].typ; t != current {
			if current >= 0 {
				doc.endArray()
			}
			doc.key(types[t])
			doc.beginArray()
			current = t
		}
		if len(b) < flushAt {
			doc.raw(b)
		} else {
			// A large resource (a listener of every HTTPS host) is
			// written as it is, not copied into the document first.
			doc.raw(nil)
			doc.buf = out.write(doc.buf)
			out.write(b)
		}
		free.put(b)
		if len(doc.buf) >= flushAt {
			doc.buf = out.write(doc.buf)
		}
		return out.err
	})
	if err != nil {
		return err
	}
	if current >= 0 {
		doc.endArray()
	}
	doc.endObject()
	if len(o.SourceProblems) > 0 {
		b, err := json.MarshalIndent(o.SourceProblems, "  ", "  ")
		if err != nil {
			return err
		}
		doc.key("sourceProblems")
		doc.raw(b)
	}
	b, err := json.MarshalIndent(o.statusDocs(), "  ", "  ")
	if err != nil {
		return err
	}
	doc.key("statuses")
	doc.raw(b)
	doc.endObject()
	doc.buf = append(doc.buf, '\n')
	out.write(doc.buf)
	return out.err
}

// encodeYAML prints each resource with the YAML encoder on its own, nested
// as deep as it is in the document so that the encoder's line folding
// falls where it falls in the whole document, and keeps the resource's
// lines.
func (o *Output) encodeYAML(w io.Writer, opts EncodeOptions) error {
	types, all := o.items()
	out := &flusher{w: w}
	buf := []byte("resources:")
	if len(all) == 0 {
		buf = append(buf, " {}"...)
	}
	buf = append(buf, '\n')
	current := -1
	err := inOrder(len(all), func(i int) ([]byte, error) {
		t := &treeSink{}
		if err := printItem(t, func() { *t = treeSink{} }, all[i], types); err != nil {
			return nil, err
		}
		if typ := types[all[i].typ]; plainKey(typ) {
			head := append(append([]byte("resources:\n  "), typ...), ":\n"...)
			if b, ok := fastYAMLItem(head, t.root, 2); ok {
				return b, nil
			}
		}
		return yamlv2.Marshal(map[string]any{"resources": map[string]any{types[all[i].typ]: []any{t.root}}})
	}, func(i int, b []byte) error {
		// b is "resources:", the type URL's line, then the resource.
		_, b, _ = bytes.Cut(b, []byte{'\n'})
		header, body, _ := bytes.Cut(b, []byte{'\n'})
		if t := all[i].typ; t != current {
			buf = append(append(buf, header...), '\n')
			current = t
		}
		buf = append(buf, body...)
		if len(buf) >= flushAt {
			buf = out.write(buf)
		}
		return out.err
	})
	if err != nil {
		return err
	}
	if len(o.SourceProblems) > 0 {
		b, err := yamlOfJSON("sourceProblems", o.SourceProblems)
		if err != nil {
			return err
		}
		buf = append(buf, b...)
	}
	if opts.StatusesNote != "" {
		buf = append(append(append(buf, "# "...), opts.StatusesNote...), '\n')
	}
	b, err := yamlOfJSON("statuses", o.statusDocs())
	if err != nil {
		return err
	}
	buf = append(buf, b...)
	out.write(buf)
	return out.err
}

// yamlOfJSON prints v under key as YAML, through its JSON form, as
// sigs.k8s.io/yaml's JSONToYAML prints a JSON document: decoded by the YAML
// decoder, which types its numbers, then encoded.
func yamlOfJSON(key string, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var tree any
	if err := yamlv2.Unmarshal(j, &tree); err != nil {
		return nil, err
	}
	return yamlv2.Marshal(map[string]any{key: tree})
}

// buffers hands the buffers a resource was printed in back to the workers
// once it is written, so that each is grown to a resource's size once. It
// holds as many as inOrder keeps in flight.
type buffers chan []byte

func newBuffers() buffers { return make(buffers, 5*batch*runtime.GOMAXPROCS(0)) }

func (f buffers) get() []byte {
	select {
	case b := <-f:
		return b
	default:
		return nil
	}
}

// sized is get for a resource to be printed as JSON: a large one gets a
// buffer of a few times its encoded size from the start. append grows a
// slice that large by a quarter at a time, and the HTTPS listener of
// 10,000 roots (16 MB of JSON) made one worker allocate and copy about
// 80 MB on the way, while the output waited for it.
func (f buffers) sized(it item) []byte {
	b := f.get()
	if it.res == nil {
		return b
	}
	if n := jsonPerWireByte * len(it.res.Any.GetValue()); n > flushAt && cap(b) < n {
		f.put(b)
		return make([]byte, 0, n)
	}
	return b
}

// jsonPerWireByte is about how many bytes of indented JSON a byte of a
// large resource's encoding prints as: 3.1 for the HTTPS listener of the
// directory shape, more for resources of many small fields.
const jsonPerWireByte = 4

func (f buffers) put(b []byte) {
	select {
	case f <- b[:0]:
	default:
	}
}
