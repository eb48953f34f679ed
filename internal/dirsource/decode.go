package dirsource

import (
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	yamlv3 "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// scheme knows exactly the kinds Switchyard reads (and their lists), so that
// anything else fails to decode as "not registered" and is reported as a
// kind Switchyard does not read. It is built once and never changed.
var scheme = newScheme()

// codec decodes one JSON document strictly: unknown and duplicate fields are
// errors, as with kubectl's --validate=strict.
var codec = kserializer.NewSerializerWithOptions(kserializer.DefaultMetaFactory, scheme, scheme,
	kserializer.SerializerOptions{Strict: true})

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(switchyardv1.AddToScheme(s))
	utilruntime.Must(switchyardv1alpha1.AddToScheme(s))
	utilruntime.Must(splitv1alpha4.AddToScheme(s))
	utilruntime.Must(specsv1alpha4.AddToScheme(s))
	utilruntime.Must(accessv1alpha3.AddToScheme(s))
	s.AddKnownTypes(corev1.SchemeGroupVersion,
		&corev1.Service{}, &corev1.ServiceList{},
		&corev1.Secret{}, &corev1.SecretList{},
		&corev1.Node{}, &corev1.NodeList{},
		&corev1.Namespace{}, &corev1.NamespaceList{},
		&corev1.Pod{}, &corev1.PodList{},
		&corev1.List{},
	)
	s.AddKnownTypes(discoveryv1.SchemeGroupVersion, &discoveryv1.EndpointSlice{}, &discoveryv1.EndpointSliceList{})
	return s
}

// readAs is the apiVersion each kind is read at, for a useful message when a
// manifest names a kind Switchyard reads at another version.
var readAs = map[string]schema.GroupVersion{
	"HTTPProxy":                switchyardv1.SchemeGroupVersion,
	"TLSCertificateDelegation": switchyardv1.SchemeGroupVersion,
	"ExtensionService":         switchyardv1alpha1.SchemeGroupVersion,
	"Service":                  corev1.SchemeGroupVersion,
	"Secret":                   corev1.SchemeGroupVersion,
	"Node":                     corev1.SchemeGroupVersion,
	"EndpointSlice":            discoveryv1.SchemeGroupVersion,
	"Namespace":                corev1.SchemeGroupVersion,
	"TrafficSplit":             splitv1alpha4.SchemeGroupVersion,
	"HTTPRouteGroup":           specsv1alpha4.SchemeGroupVersion,
	"TrafficTarget":            accessv1alpha3.SchemeGroupVersion,
	"Pod":                      corev1.SchemeGroupVersion,
}

// maxListDepth bounds Lists nested in Lists; real manifests nest at most once.
const maxListDepth = 8

// decoded is one object read from a file, with the line of its document.
type decoded struct {
	key  objects.Key
	obj  runtime.Object
	line int
}

// decodeFile decodes every document of a file, making each object smaller
// with compact (objects.Compact, CompactWithoutMesh or CompactShared) before keeping it.
// file is only used to name the file in problems. It never panics and
// never fails as a whole: what cannot be read becomes a Problem and the
// rest is returned.
func decodeFile(file string, data []byte, compact compactor) ([]decoded, []Problem) {
	docs := splitDocuments(data)
	workers := min(goruntime.GOMAXPROCS(0), len(docs))
	if len(data) < parallelFileSize || workers <= 1 {
		return decodeDocs(file, docs, compact)
	}
	// Documents are independent: chunks decoded at once and joined in
	// order give what decoding them in turn gives.
	chunks := chunkDocs(docs, 4*workers)
	objs := make([][]decoded, len(chunks))
	problems := make([][]Problem, len(chunks))
	parallel(len(chunks), func(i int) { objs[i], problems[i] = decodeDocs(file, chunks[i], compact) })
	return slices.Concat(objs...), slices.Concat(problems...)
}

// parallelFileSize is the size from which a file's documents are decoded
// on every core: files are read on every core, but a directory of one
// large file would otherwise be read on one.
const parallelFileSize = 1 << 20

func decodeDocs(file string, docs []document, compact compactor) ([]decoded, []Problem) {
	d := fileDecoder{file: file, compact: compact}
	for _, doc := range docs {
		d.document(doc)
	}
	return d.objs, d.problems
}

// chunkDocs cuts docs into at most n runs of about equal size.
func chunkDocs(docs []document, n int) [][]document {
	total := 0
	for _, d := range docs {
		total += len(d.data)
	}
	var chunks [][]document
	start, size := 0, 0
	for i, d := range docs {
		size += len(d.data)
		if size*n >= total*(len(chunks)+1) || i == len(docs)-1 {
			chunks = append(chunks, docs[start:i+1])
			start = i + 1
		}
	}
	return chunks
}

// parallel calls f(0) ... f(n-1) on every core and returns when all have
// returned.
func parallel(n int, f func(i int)) {
	workers := min(goruntime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// sortInParallel returns s sorted by cmp, which must tell every two
// elements apart: its halves are sorted at once, on two cores, and merged
// into a new slice. Smaller slices, or one core, are sorted in place.
func sortInParallel[T any](s []T, cmp func(a, b T) int) []T {
	if goruntime.GOMAXPROCS(0) < 2 || len(s) < parallelSort {
		slices.SortFunc(s, cmp)
		return s
	}
	a, b := s[:len(s)/2], s[len(s)/2:]
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(a, cmp) })
	slices.SortFunc(b, cmp)
	wg.Wait()
	out := make([]T, 0, len(s))
	for len(a) > 0 && len(b) > 0 {
		if cmp(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// parallelSort is the length from which sortInParallel sorts on two cores.
const parallelSort = 1 << 14

type fileDecoder struct {
	file     string
	compact  compactor
	objs     []decoded
	problems []Problem

	fast fastScanner
	// buf holds the JSON of one document at a time: what decodes it
	// copies what it keeps, so the next document reuses the storage.
	buf []byte
	typedState
}

// head is what identifies a manifest, read leniently so that a problem can
// name the object even when the document does not decode.
type head struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func (d *fileDecoder) document(doc document) {
	if fd, ok := d.fast.fastJSON(doc.data, d.buf); ok {
		d.buf = fd.data
		d.top(doc.line, fd.apiVersion, fd.kind, fd.seen, fd.data)
		return
	}
	// Outside the fast path's subset, one parse into yaml.v3 nodes checks the syntax; writing JSON from the
	// nodes catches duplicate keys (which a plain YAML-to-JSON conversion
	// silently drops); the strict JSON decode below then checks fields and
	// types.
	root, err := parseYAML(doc.data)
	var data []byte
	if err == nil && root != nil && root.Kind == yamlv3.MappingNode {
		data, err = toJSON(root, len(doc.data))
	}
	if err != nil {
		var h head
		if m, ok := lenientYAML(doc.data).(map[string]any); ok {
			h = headOf(m)
		}
		d.problem(doc.line, h, Error, yamlMessage(err, doc.line))
		return
	}
	switch {
	case root == nil || root.ShortTag() == "!!null":
		return // "~", "null" or an empty flow: nothing to read
	case root.Kind == yamlv3.MappingNode:
		apiVersion, kind, seen := headOfNode(root)
		d.top(doc.line, apiVersion, kind, seen, data)
	default:
		d.problem(doc.line, head{}, Error,
			fmt.Sprintf("document is %s, not an object with apiVersion and kind", describeNode(root)))
	}
}

// top decodes a document's object. The kinds Switchyard reads go straight
// into their type; Lists, kinds it does not read and manifests without a
// usable apiVersion and kind take the codec's path, whose errors say why.
func (d *fileDecoder) top(line int, apiVersion, kind string, seen int, data []byte) {
	gvk, ok := gvkOf(apiVersion, kind, seen)
	if !ok || strings.HasSuffix(gvk.Kind, "List") || !scheme.Recognizes(gvk) {
		d.object(line, "", data, 0)
		return
	}
	if obj, ok := decodeTyped(gvk, data, &d.typedState); ok {
		d.typed(line, "", obj, true)
		return
	}
	obj, err := scheme.New(gvk)
	if err != nil {
		d.object(line, "", data, 0)
		return
	}
	if err := decodeStrict(data, obj); err != nil {
		var h head
		_ = json.Unmarshal(data, &h) // best effort: fields of the wrong type stay empty
		d.problem(line, h, Error, decodeMessage(err, h))
		return
	}
	d.typed(line, "", obj, false)
}

// decodeStrict decodes JSON into obj, refusing unknown and repeated
// fields.
func decodeStrict(data []byte, obj runtime.Object) error {
	strictErrs, err := kjson.UnmarshalStrict(data, obj)
	if err == nil && len(strictErrs) > 0 {
		err = runtime.NewStrictDecodingError(strictErrs)
	}
	return err
}

// headOfNode reads apiVersion and kind from a document's top mapping, and
// counts the entries of either that are string scalars.
func headOfNode(root *yamlv3.Node) (apiVersion, kind string, seen int) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yamlv3.ScalarNode || v.Kind != yamlv3.ScalarNode || v.ShortTag() != "!!str" {
			continue
		}
		switch k.Value {
		case "apiVersion":
			apiVersion = v.Value
			seen++
		case "kind":
			kind = v.Value
			seen++
		}
	}
	return apiVersion, kind, seen
}

// gvkOf is the kind a document names, when apiVersion and kind are each
// there once as a string.
func gvkOf(apiVersion, kind string, seen int) (schema.GroupVersionKind, bool) {
	if seen != 2 || apiVersion == "" || kind == "" {
		return schema.GroupVersionKind{}, false
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	return gv.WithKind(kind), true
}

// object decodes one JSON object: a top-level document or an item of a List.
// prefix locates an item inside its List ("items[3]: ").
func (d *fileDecoder) object(line int, prefix string, data []byte, depth int) {
	obj, gvk, err := codec.Decode(data, nil, nil)
	if err != nil {
		var h head
		_ = json.Unmarshal(data, &h) // best effort: fields of the wrong type stay empty
		d.problem(line, h, kindSeverity(err, h), prefix+decodeMessage(err, h))
		return
	}
	if list, ok := obj.(*corev1.List); ok {
		if depth >= maxListDepth {
			d.problem(line, head{Kind: "List"}, Error, prefix+fmt.Sprintf("Lists nested more than %d deep; skipped", maxListDepth))
			return
		}
		for i, item := range list.Items {
			p := fmt.Sprintf("%sitems[%d]: ", prefix, i)
			if item.Raw == nil {
				d.problem(line, head{}, Error, p+"item is null")
				continue
			}
			d.object(line, p, item.Raw, depth+1)
		}
		return
	}
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			d.problem(line, head{Kind: gvk.Kind}, Error, prefix+err.Error())
			return
		}
		for i, item := range items {
			d.typed(line, fmt.Sprintf("%sitems[%d]: ", prefix, i), item, false)
		}
		return
	}
	d.typed(line, prefix, obj, false)
}

// typed checks and completes one decoded object the way the API server
// would: default namespace, Secret stringData, valid names and fields.
// shared says that the hand decoder read it (see compactor).
func (d *fileDecoder) typed(line int, prefix string, obj runtime.Object, shared bool) {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		d.problem(line, head{}, Error, prefix+fmt.Sprintf("decoded an unregistered %T", obj))
		return
	}
	gvk := gvks[0]
	setKind(obj.GetObjectKind(), gvk)
	key, err := objects.KeyOf(obj)
	if err != nil {
		// Decodable but not read, such as a metav1.Status.
		d.problem(line, head{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, Warning,
			prefix+notReadMessage(gvk.Kind, gvk.GroupVersion().String()))
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		d.problem(line, head{Kind: gvk.Kind}, Error, prefix+err.Error())
		return
	}
	if key.Kind.ClusterScoped() {
		m.SetNamespace("") // cluster-scoped: the API server ignores it too
	} else if m.GetNamespace() == "" {
		m.SetNamespace(corev1.NamespaceDefault)
	}
	if s, ok := obj.(*corev1.Secret); ok {
		mergeStringData(s)
	}
	key, _ = objects.KeyOf(obj)
	h := head{Kind: key.Kind.String()}
	h.Metadata.Name, h.Metadata.Namespace = key.Name, key.Namespace
	if msg := validateKey(key, m.GetGenerateName()); msg != "" {
		d.problem(line, h, Error, prefix+msg)
		return
	}
	if msg := validateObject(obj); msg != "" {
		d.problem(line, h, Error, prefix+msg)
		return
	}
	d.objs = append(d.objs, decoded{key: key, obj: d.compact(obj, shared), line: line})
}

// setKind sets an object's apiVersion and kind to gvk's. Most already say
// exactly that, and formatting the apiVersion again would allocate it for
// every object.
func setKind(k schema.ObjectKind, gvk schema.GroupVersionKind) {
	if t, ok := k.(*metav1.TypeMeta); ok && t.Kind == gvk.Kind && isAPIVersion(t.APIVersion, gvk.GroupVersion()) {
		return
	}
	k.SetGroupVersionKind(gvk)
}

// isAPIVersion reports whether s is gv.String().
func isAPIVersion(s string, gv schema.GroupVersion) bool {
	if gv.Group == "" {
		return s == gv.Version
	}
	g := len(gv.Group)
	return len(s) == g+1+len(gv.Version) && s[:g] == gv.Group && s[g] == '/' && s[g+1:] == gv.Version
}

// mergeStringData folds stringData into data as the API server does on
// write: stringData wins, and the object read back has no stringData.
func mergeStringData(s *corev1.Secret) {
	if len(s.StringData) == 0 {
		s.StringData = nil
		return
	}
	if s.Data == nil {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

func (d *fileDecoder) problem(line int, h head, sev Severity, msg string) {
	p := Problem{
		File:      d.file,
		Line:      line,
		Kind:      h.Kind,
		Namespace: h.Metadata.Namespace,
		Name:      h.Metadata.Name,
		Severity:  sev,
		Message:   msg,
	}
	if k, ok := objects.KindFromString(h.Kind); ok && p.Name != "" {
		if k.ClusterScoped() {
			p.Namespace = ""
		} else if p.Namespace == "" {
			p.Namespace = corev1.NamespaceDefault
		}
	}
	d.problems = append(d.problems, p)
}

// kindSeverity makes an unknown kind a Warning (it is simply not ours), but
// a kind Switchyard reads at the wrong version an Error: that manifest was
// meant for Switchyard and its objects are missing.
func kindSeverity(err error, h head) Severity {
	if runtime.IsNotRegisteredError(err) && !misversioned(h) {
		return Warning
	}
	return Error
}

// misversioned reports whether a manifest names a kind Switchyard reads in
// the same API group at another version, or a Switchyard kind in Contour's
// group (a manifest not yet migrated).
func misversioned(h head) bool {
	want, ok := readAs[h.Kind]
	if !ok {
		return false
	}
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil {
		return false
	}
	return gv.Group == want.Group || (gv.Group == "projectcontour.io" && want.Group == switchyardv1.GroupName)
}

func decodeMessage(err error, h head) string {
	switch {
	case runtime.IsNotRegisteredError(err) && misversioned(h):
		want := readAs[h.Kind]
		return fmt.Sprintf("kind %s is read as %s, not %s; change apiVersion to %s", h.Kind, want, h.APIVersion, want)
	case runtime.IsNotRegisteredError(err):
		return notReadMessage(h.Kind, h.APIVersion)
	case runtime.IsMissingKind(err) || runtime.IsMissingVersion(err):
		var missing []string
		if h.APIVersion == "" {
			missing = append(missing, "apiVersion")
		}
		if h.Kind == "" {
			missing = append(missing, "kind")
		}
		if len(missing) == 0 {
			return "apiVersion or kind is not a valid string"
		}
		return strings.Join(missing, " and ") + " missing"
	}
	return oneLine(err.Error())
}

func notReadMessage(kind, apiVersion string) string {
	return fmt.Sprintf("kind %s (%s) is not read by switchyard; skipped", kind, apiVersion)
}

// lenientYAML parses a document without the strict checks, to name the
// object in a problem about a duplicate key. It returns nil when even that
// fails.
func lenientYAML(data []byte) any {
	var v any
	if err := utilyaml.Unmarshal(data, &v); err != nil {
		return nil
	}
	return v
}

func headOf(m map[string]any) head {
	var h head
	h.APIVersion, _ = m["apiVersion"].(string)
	h.Kind, _ = m["kind"].(string)
	if md, ok := m["metadata"].(map[string]any); ok {
		h.Metadata.Name, _ = md["name"].(string)
		h.Metadata.Namespace, _ = md["namespace"].(string)
	}
	return h
}

func describeNode(n *yamlv3.Node) string {
	if n.Kind == yamlv3.AliasNode {
		n = n.Alias
	}
	if n.Kind == yamlv3.SequenceNode {
		return "a list"
	}
	v, isString, err := scalarJSON(n)
	switch {
	case err != nil:
		return "a number"
	case isString:
		return "a string"
	case v == "true" || v == "false":
		return "a boolean"
	default:
		return "a number"
	}
}
