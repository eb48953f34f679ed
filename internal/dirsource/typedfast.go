package dirsource

import (
	"bytes"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// The strict JSON decode (sigs.k8s.io/json) was half of a directory read:
// reflection over every field of every object. The kinds a directory holds
// by the ten thousand are decoded here by hand instead, for the fields such
// manifests set. A document with anything else (a field not listed here,
// a null, an escape or a byte outside printable ASCII in a string, a number
// that is not a plain integer, a repeated key, blanks between tokens) is
// declined whole and takes the strict decoder, so that every error keeps
// its wording and every rarer field its decoding. What is decoded here is
// deep-equal to what the strict decoder makes of the same JSON:
// TestTypedFastCorpus, TestTypedFastCases, TestTypedFastYAML and
// FuzzTypedFast hold the two paths together.

var (
	serviceGVK       = corev1.SchemeGroupVersion.WithKind("Service")
	endpointSliceGVK = discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice")
	httpProxyGVK     = switchyardv1.SchemeGroupVersion.WithKind("HTTPProxy")
)

// typedFastOff turns decodeTyped off, for tests that compare a read with
// and without it.
var typedFastOff bool

// decodeTyped decodes the JSON of one object of kind gvk by hand; ok is
// false when it declines, and the caller decodes strictly.
func decodeTyped(gvk schema.GroupVersionKind, data []byte, st *typedState) (runtime.Object, bool) {
	if typedFastOff {
		return nil, false
	}
	r := jsonReader{b: data, ok: true, st: st}
	defer func() { st.keys = r.keys[:0] }()
	r.keys = st.keys[:0]
	var obj runtime.Object
	switch gvk {
	case serviceGVK:
		s := &corev1.Service{}
		r.object(func(k string) { r.service(k, s) })
		obj = s
	case endpointSliceGVK:
		s := &discoveryv1.EndpointSlice{}
		r.object(func(k string) { r.endpointSlice(k, s) })
		obj = s
	case httpProxyGVK:
		p := &switchyardv1.HTTPProxy{}
		r.object(func(k string) { r.httpProxy(k, p) })
		obj = p
	default:
		return nil, false
	}
	if !r.ok || r.p != len(r.b) {
		return nil, false
	}
	return obj, true
}

// typedState is what decodeTyped keeps from one document of a file to the
// next.
type typedState struct {
	keys []span
	// shared holds the strings that objects repeat (namespaces, label
	// keys, protocols, zones): one copy for all the file's objects.
	shared map[string]string
	// pointers are the pointers to shared strings that EndpointSlices
	// hold their zones and port names by, and yes and no the booleans of
	// their conditions: objects are never written to (see the package
	// comment), so they may share them, as objects.Compact makes them do.
	pointers  map[string]*string
	protocols map[string]*corev1.Protocol
	ports     map[int32]*int32
	yes, no   *bool
}

// sharedPointer returns m's pointer to a value equal to k, made the
// first time; values are converted from keys by value.
func sharedPointer[K comparable, V any](m *map[K]*V, k K, value func(K) V) *V {
	if p := (*m)[k]; p != nil {
		return p
	}
	p := new(V)
	*p = value(k)
	if *m == nil {
		*m = make(map[K]*V)
	}
	if len(*m) < maxShared {
		(*m)[k] = p
	}
	return p
}

func same[T any](v T) T { return v }

// maxShared bounds typedState.shared, which a file of made-up names
// would otherwise grow without end.
const maxShared = 4096

// jsonReader reads the compact JSON that fastJSON and toJSON write. It
// never reports an error: ok turns false and stays so.
type jsonReader struct {
	b  []byte
	p  int
	ok bool
	// keys are the keys of the open objects, to find a repeated one.
	keys []span
	st   *typedState
}

func (r *jsonReader) fail() { r.ok = false }

// eat moves past c when it is next.
func (r *jsonReader) eat(c byte) bool {
	if r.ok && r.p < len(r.b) && r.b[r.p] == c {
		r.p++
		return true
	}
	return false
}

// object reads an object, calling member for each key with the reader at
// its value; member must read the value or fail.
func (r *jsonReader) object(member func(key string)) {
	if !r.eat('{') {
		r.fail()
		return
	}
	if r.eat('}') {
		return
	}
	mark := len(r.keys)
	for r.ok {
		start := r.p + 1
		key := r.text()
		if !r.ok || !r.newKey(start, mark) || !r.eat(':') {
			r.fail()
			break
		}
		member(bytesString(key))
		if r.eat('}') {
			break
		}
		if !r.eat(',') {
			r.fail()
		}
	}
	r.keys = r.keys[:mark]
}

// newKey records the key just read (from start to before its closing
// quote), refusing one its object already has.
func (r *jsonReader) newKey(start, mark int) bool {
	key := r.b[start : r.p-1]
	for _, o := range r.keys[mark:] {
		if string(r.b[o.start:o.end]) == string(key) {
			return false
		}
	}
	r.keys = append(r.keys, span{start, r.p - 1})
	return true
}

// array reads an array, calling item with the reader at each element.
func (r *jsonReader) array(item func()) {
	if !r.eat('[') {
		r.fail()
		return
	}
	if r.eat(']') {
		return
	}
	for r.ok {
		item()
		if r.eat(']') {
			return
		}
		if !r.eat(',') {
			r.fail()
		}
	}
}

// elements counts the elements of the array at r.p, so that the slice
// they are read into is made at its size: grown by appending, a slice of
// endpoints or ports was allocated two or three times over, 66,000 of
// each at 10,000 roots. It counts the commas at the array's own depth,
// skipping strings, which text reads without escapes; on input it cannot
// follow (which text then rejects) it may miscount, and the slice grows.
func (r *jsonReader) elements() int {
	b := r.b[r.p:]
	if len(b) < 2 || b[0] != '[' || b[1] == ']' {
		return 0
	}
	depth, n := 0, 1
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := bytes.IndexByte(b[i+1:], '"')
			if end < 0 {
				return 0
			}
			i += end + 1
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return n
			}
		case ',':
			if depth == 1 {
				n++
			}
		}
	}
	return 0
}

// text reads a string without escapes, as a view of the input.
func (r *jsonReader) text() []byte {
	if !r.eat('"') {
		r.fail()
		return nil
	}
	start := r.p
	for ; r.p < len(r.b); r.p++ {
		switch c := r.b[r.p]; {
		case c == '"':
			r.p++
			return r.b[start : r.p-1]
		case c == '\\' || c < 0x20 || c >= 0x7f:
			r.fail()
			return nil
		}
	}
	r.fail()
	return nil
}

func (r *jsonReader) str() string { return string(r.text()) }

// shared reads a string that many objects repeat, as the copy an earlier
// document made when there is one: strings are never written to, so
// objects may share them.
func (r *jsonReader) shared() string {
	b := r.text()
	if !r.ok {
		return ""
	}
	return r.st.intern(bytesString(b))
}

// intern returns the file's copy of k, a view of the input, making it the
// first time.
func (st *typedState) intern(k string) string {
	if s, ok := st.shared[k]; ok {
		return s
	}
	s := strings.Clone(k)
	if st.shared == nil {
		st.shared = make(map[string]string)
	}
	if len(st.shared) < maxShared {
		st.shared[s] = s
	}
	return s
}

func (r *jsonReader) sharedPtr() *string {
	return sharedPointer(&r.st.pointers, r.shared(), same[string])
}

func (r *jsonReader) sharedProtocol() *corev1.Protocol {
	return sharedPointer(&r.st.protocols, r.shared(), func(s string) corev1.Protocol { return corev1.Protocol(s) })
}

func (r *jsonReader) sharedPort() *int32 {
	return sharedPointer(&r.st.ports, r.int32(), same[int32])
}

// sharedBool reads a boolean as a pointer that the file's objects share.
func (r *jsonReader) sharedBool() *bool {
	p := &r.st.no
	if r.bool() {
		p = &r.st.yes
	}
	if !r.ok {
		return nil
	}
	if *p == nil {
		*p = new(bool)
		**p = p == &r.st.yes
	}
	return *p
}

func (r *jsonReader) strPtr() *string {
	s := r.str()
	return &s
}

// integer reads a number written as a JSON integer that fits in bits.
func (r *jsonReader) integer(bits int) int64 {
	start := r.p
	r.eat('-')
	digits := r.p
	for r.p < len(r.b) && '0' <= r.b[r.p] && r.b[r.p] <= '9' {
		r.p++
	}
	n := r.p - digits
	if n == 0 || (n > 1 && r.b[digits] == '0') {
		r.fail()
		return 0
	}
	if r.p < len(r.b) {
		if c := r.b[r.p]; c == '.' || c == 'e' || c == 'E' {
			r.fail()
			return 0
		}
	}
	v, err := strconv.ParseInt(bytesString(r.b[start:r.p]), 10, bits)
	if err != nil {
		r.fail()
	}
	return v
}

func (r *jsonReader) int32() int32 { return int32(r.integer(32)) }

func (r *jsonReader) int32Ptr() *int32 {
	v := r.int32()
	return &v
}

func (r *jsonReader) int64Ptr() *int64 {
	v := r.integer(64)
	return &v
}

func (r *jsonReader) bool() bool {
	switch {
	case r.literal("true"):
		return true
	case r.literal("false"):
		return false
	}
	r.fail()
	return false
}

func (r *jsonReader) literal(word string) bool {
	if r.ok && len(r.b)-r.p >= len(word) && string(r.b[r.p:r.p+len(word)]) == word {
		r.p += len(word)
		return true
	}
	return false
}

// stringMap reads an object of strings into *m, made if nil, as the strict
// decoder fills a map. Short values are shared among the file's objects,
// which objects.CompactShared counts on.
func (r *jsonReader) stringMap(m *map[string]string) {
	if *m == nil {
		*m = map[string]string{}
	}
	r.object(func(k string) { (*m)[r.st.intern(k)] = r.mapValue() })
}

func (r *jsonReader) mapValue() string {
	b := r.text()
	if len(b) > objects.MaxSharedValue || !r.ok {
		return string(b)
	}
	return r.st.intern(bytesString(b))
}

// stringList reads an array of strings; an empty one is an empty slice, not
// nil, as the strict decoder makes it.
func (r *jsonReader) stringList() []string {
	out := []string{}
	r.array(func() { out = append(out, r.str()) })
	return out
}

// typeMeta reads apiVersion and kind, and reports whether k was one.
func (r *jsonReader) typeMeta(k string, t *metav1.TypeMeta) bool {
	switch k {
	case "apiVersion":
		t.APIVersion = r.shared()
	case "kind":
		t.Kind = r.shared()
	default:
		return false
	}
	return true
}

// objectMeta reads the metadata fields manifests set; creationTimestamp,
// ownerReferences and the rest are left to the strict decoder.
func (r *jsonReader) objectMeta(m *metav1.ObjectMeta) {
	r.object(func(k string) {
		switch k {
		case "name":
			m.Name = r.str()
		case "generateName":
			m.GenerateName = r.str()
		case "namespace":
			m.Namespace = r.shared()
		case "uid":
			m.UID = types.UID(r.str())
		case "resourceVersion":
			m.ResourceVersion = r.str()
		case "generation":
			m.Generation = r.integer(64)
		case "labels":
			r.stringMap(&m.Labels)
		case "annotations":
			r.stringMap(&m.Annotations)
		default:
			r.fail()
		}
	})
}
