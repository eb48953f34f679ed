package dirsource

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
)

// docJSON is the JSON and kind that top is given for a document, as
// document() writes them; ok is false when top is not reached.
func docJSON(data []byte) ([]byte, schema.GroupVersionKind, bool) {
	var s fastScanner
	d, ok := s.fastJSON(data, nil)
	if !ok {
		var err error
		if d, ok, err = slowDoc(data); err != nil || !ok {
			return nil, schema.GroupVersionKind{}, false
		}
	}
	gvk, ok := gvkOf(d.apiVersion, d.kind, d.seen)
	return d.data, gvk, ok
}

// checkTyped fails unless decodeTyped declines data or decodes it
// deep-equal to the strict decoder, and reports whether it answered. The
// input is overwritten after the fast decode, as the next document
// overwrites it in decodeFile, so that nothing decoded may point into it.
func checkTyped(t testing.TB, gvk schema.GroupVersionKind, data []byte) bool {
	t.Helper()
	return checkTypedWith(t, &typedState{}, gvk, data)
}

// checkTypedWith is checkTyped with the state of a decoder that may have
// read other documents.
func checkTypedWith(t testing.TB, st *typedState, gvk schema.GroupVersionKind, data []byte) bool {
	t.Helper()
	scratch := bytes.Clone(data)
	got, ok := decodeTyped(gvk, scratch, st)
	if !ok {
		return false
	}
	for i := range scratch {
		scratch[i] = 'x'
	}
	want, err := scheme.New(gvk)
	if err != nil {
		t.Fatalf("%s: decoded as a %v, which the scheme does not know", data, gvk)
	}
	if err := decodeStrict(data, want); err != nil {
		t.Fatalf("%s: decoded fast, but the strict decoder refuses it: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nfast   %#v\nstrict %#v", data, got, want)
	}
	return true
}

// TestTypedFastCorpus requires every document of the corpus (testdata,
// examples, the translator's and the DAG's test data, what scalegen
// writes) to decode the same on both paths, and every document of a kind
// decodeTyped reads that scalegen writes to take the fast path: those are
// what a large directory is made of.
func TestTypedFastCorpus(t *testing.T) {
	fast, kinds := 0, 0
	st := &typedState{}
	for _, doc := range corpus(t) {
		checkAgainstStrict(t, doc)
		data, gvk, ok := docJSON(doc)
		if !ok {
			continue
		}
		if typedKind(gvk) {
			kinds++
		}
		if checkTypedWith(t, st, gvk, data) {
			fast++
		}
	}
	t.Logf("%d of %d documents of the kinds decoded by hand took the fast path", fast, kinds)
	for _, doc := range scalegenDocs(t) {
		data, gvk, ok := docJSON(doc)
		if ok && typedKind(gvk) && !checkTypedWith(t, st, gvk, data) {
			t.Errorf("a %s that scalegen writes was declined:\n%s", gvk.Kind, doc)
		}
	}
}

func typedKind(gvk schema.GroupVersionKind) bool {
	return gvk == serviceGVK || gvk == endpointSliceGVK || gvk == httpProxyGVK
}

// scalegenDocs is what `switchyard gen` writes at a small size, with
// every feature it has turned on.
func scalegenDocs(t testing.TB) [][]byte { return generatedDocs(t, 30, 3) }

// generatedDocs are the documents of a generated set of proxies, included
// of them included by others, half of the roots on TLS.
func generatedDocs(t testing.TB, proxies, included int) [][]byte {
	t.Helper()
	cfg := scalegen.Defaults()
	cfg.Proxies, cfg.Included, cfg.TLSFraction = proxies, included, 0.5
	set, err := scalegen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := set.Write(dir); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	var docs [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range splitDocuments(data) {
			docs = append(docs, d.data)
		}
	}
	return docs
}

// typedCases are JSON documents at the edge of what decodeTyped reads;
// fast says whether it must answer (and then agree) or must decline.
var typedCases = []struct {
	gvk  schema.GroupVersionKind
	json string
	fast bool
}{
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","namespace":"n"},"spec":{"ports":[{"port":80,"targetPort":8080}]}}`, true},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","labels":{},"annotations":{"x":""}},"spec":{"ports":[],"selector":{}}}`, true},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{},"spec":{},"status":{}}`, true},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{}]},"status":{"loadBalancer":{}}}`, true},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"name":"h","port":-0,"targetPort":"http","protocol":"UDP","appProtocol":"h2c","nodePort":30000}],"type":"NodePort","clusterIP":"None"}}`, true},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"generation":9223372036854775807,"uid":"u","resourceVersion":"1","generateName":"g-"}}`, true},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"externalName":"a.example.com","type":"ExternalName"}}`, true},
	{serviceGVK, `{"kind":"Service","apiVersion":"v1"}`, true},
	{serviceGVK, `{}`, true},
	// Declined: the strict decoder reads (or refuses) these.
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":"80"}]}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":80.0}]}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":8e1}]}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":2147483648}]}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":080}]}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":-}]}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":null}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":null}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"creationTimestamp":null}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"labels":{"a":"1","a":"2"}}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"},"metadata":{"name":"b"}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":80,"port":81}]}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","Spec":{}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"sessionAffinity":"None"}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a\"b"}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"\u00e9"}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"é"}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","status":{"loadBalancer":{"ingress":[]}}}`, false},
	{serviceGVK, `{"apiVersion":"v1", "kind":"Service"}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service"}x`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service"`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":[]}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":{}}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[1]}}`, false},
	{serviceGVK, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{},]}}`, false},
	{serviceGVK, `{"apiVersion":1,"kind":"Service"}`, false},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","addressType":"IPv4","endpoints":[{"addresses":["10.0.0.1"],"conditions":{"ready":true,"serving":false},"zone":"z","nodeName":"n","hostname":"h"}],"ports":[{"name":"http","port":8080,"protocol":"TCP","appProtocol":"http"}]}`, true},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","endpoints":[],"ports":[]}`, true},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","endpoints":[{"addresses":[],"conditions":{}},{}],"ports":[{}]}`, true},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","endpoints":[{"conditions":{"ready":"true"}}]}`, false},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","endpoints":[{"conditions":{"ready":null}}]}`, false},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","endpoints":[{"conditions":{"ready":truex}}]}`, false},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","endpoints":[{"targetRef":{"kind":"Pod"}}]}`, false},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","endpoints":[{"addresses":[null]}]}`, false},
	{endpointSliceGVK, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","ports":[{"port":1,"port":2}]}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","metadata":{"name":"p"},"spec":{"virtualhost":{"fqdn":"a.b","tls":{"secretName":"s","minimumProtocolVersion":"1.3","passthrough":false,"enableFallbackCertificate":true}},"routes":[{"name":"r","conditions":[{"prefix":"/"},{"exact":"/x"},{"regex":"/y.*"}],"services":[{"name":"s","port":80,"weight":10,"priority":1,"protocol":"h2","mirror":true}],"enableWebsockets":true,"permitInsecure":false,"timeoutPolicy":{"response":"1s","idle":"2s","idleConnection":"3s"}}],"includes":[{"name":"i","namespace":"n","conditions":[{"prefix":"/i"}]}],"ingressClassName":"c"},"status":{"currentStatus":"valid","description":"d"}}`, true},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":{},"routes":[{"timeoutPolicy":{},"conditions":[],"services":[]}],"includes":[]}}`, true},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":{"fqdn":"a","tls":{}}},"status":{}}`, true},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"routes":[{"services":[{"weight":-1}]}]}}`, true},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":{"fqdn":"a","authorization":{}}}}`, true},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":{"fqdn":"a","authorization":{"extensionRef":{"apiVersion":"v","name":"e","namespace":"n"},"responseTimeout":"1s","failOpen":true,"authPolicy":{"disabled":false,"context":{"a":"b"}}},"jwtProviders":[{"name":"j","default":true,"issuer":"i","audiences":["a"],"forwardJWT":true,"remoteJWKS":{"uri":"u","timeout":"1s","cacheDuration":"1h","dnsLookupFamily":"v4"}},{"audiences":[],"remoteJWKS":{}}]},"routes":[{"authPolicy":{"context":{}}},{"authPolicy":{}}]}}`, true},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":{"fqdn":"a","authorization":{"withRequestBody":{}}}}}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":{"jwtProviders":[{"remoteJWKS":{"validation":{}}}]}}}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":{"corsPolicy":{}}}}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":null}}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"routes":[{"services":[{"weight":1.5}]}]}}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"routes":[{"retryPolicy":{}}]}}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"tcpproxy":{}}}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","status":{"conditions":[]}}`, false},
	{httpProxyGVK, `{"apiVersion":"switchyard.dev/v1","kind":"HTTPProxy","spec":{"virtualhost":{"tls":{"passthrough":1}}}}`, false},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, `{"apiVersion":"v1","kind":"Secret"}`, false},
	{schema.GroupVersionKind{Group: "projectcontour.io", Version: "v1", Kind: "HTTPProxy"}, `{}`, false},
}

func TestTypedFastCases(t *testing.T) {
	for _, tc := range typedCases {
		if got := checkTyped(t, tc.gvk, []byte(tc.json)); got != tc.fast {
			t.Errorf("%s: fast path answered %v, want %v", tc.json, got, tc.fast)
		}
	}
	// Twice with one state, as a file's documents are read: what the
	// first pass shares must not change what the second decodes.
	st := &typedState{}
	for range 2 {
		for _, tc := range typedCases {
			checkTypedWith(t, st, tc.gvk, []byte(tc.json))
		}
	}
}

// TestTypedFastYAML feeds documents written the ways people write YAML
// (quoted numbers, nulls, empty maps, flow style, odd indentation,
// comments, unknown and repeated fields) through decodeFile, and requires
// the objects and problems to be what the strict decoder alone gives.
func TestTypedFastYAML(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: n}\nspec:\n  ports:\n  - port: \"80\"\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: n}\nspec:\n  ports:\n  - port: 80\n    targetPort: '8080'\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: n, labels: {}}\nspec: {ports: [{port: 0x50}]}\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n    name: a\n    labels:\n        app: ~\nspec: {}\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  creationTimestamp: null\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  portz: []\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a # the name\nspec:\n  ports:\n  -   name: http\n      port: 80\n      protocol: TCP\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: \"a\\tb\"\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  annotations:\n    note: |\n      two\n      lines\n",
		"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: n, labels: {kubernetes.io/service-name: a}}\naddressType: IPv4\nendpoints:\n- addresses: [10.0.0.1]\n  conditions: {ready: yes, serving: on}\n  zone: z\nports: [{name: http, port: 8080}]\n",
		"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: n}\naddressType: IPv4\nendpoints:\n- addresses: []\n  conditions: {ready: 1}\n",
		"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: n}\naddressType: IPv4\nendpoints:\n- addresses: [10.0.0.1]\n  targetRef: {kind: Pod, name: p}\n",
		"apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: p, namespace: n}\nspec:\n  virtualhost: {fqdn: a.example.com}\n  routes:\n  - services:\n    - {name: s, port: 80, weight: 1e1}\n",
		"apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: p, namespace: n}\nspec:\n  virtualhost: {fqdn: a.example.com}\n  routes:\n  - services:\n    - {name: s, port: 80, weight: 10}\n    retryPolicy: {count: 3}\n",
		"apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: p, namespace: n}\nspec:\n  virtualhost: {fqdn: a.example.com, tls: {secretName: s}}\n  routes:\n  - conditions: [{prefix: /}]\n    services: [{name: s, port: 80}]\n    timeoutPolicy: {response: 30s}\n  includes: [{name: i}]\nstatus: {}\n",
	}
	var all []string
	for _, d := range docs {
		if data, gvk, ok := docJSON([]byte(d)); ok {
			checkTyped(t, gvk, data)
		}
		all = append(all, d)
	}
	file := []byte(strings.Join(all, "---\n"))
	checkAgainstStrict(t, file)
}

// checkAgainstStrict requires decodeFile to give for data what it gives
// with the fast typed decode turned off.
func checkAgainstStrict(t *testing.T, data []byte) {
	t.Helper()
	gotObjs, gotProblems := decodeFile("f.yaml", data, newOptions(nil).compact())
	typedFastOff = true
	wantObjs, wantProblems := decodeFile("f.yaml", data, newOptions(nil).compact())
	typedFastOff = false
	if !reflect.DeepEqual(gotProblems, wantProblems) {
		t.Errorf("problems:\nfast   %v\nstrict %v", gotProblems, wantProblems)
	}
	if !reflect.DeepEqual(gotObjs, wantObjs) {
		t.Errorf("objects differ:\nfast   %#v\nstrict %#v", gotObjs, wantObjs)
	}
}

// FuzzTypedFast requires decodeTyped, for any JSON and any of the kinds
// it reads, to decline or to agree with the strict decoder.
func FuzzTypedFast(f *testing.F) {
	kinds := []schema.GroupVersionKind{serviceGVK, endpointSliceGVK, httpProxyGVK}
	for _, tc := range typedCases {
		for i, k := range kinds {
			if k == tc.gvk {
				f.Add(uint8(i), []byte(tc.json))
			}
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		checkTyped(t, kinds[int(kind)%len(kinds)], data)
	})
}

// TestSetKindAgrees requires setKind to leave every object with the
// apiVersion and kind that SetGroupVersionKind gives it.
func TestSetKindAgrees(t *testing.T) {
	texts := []string{"", "v1", "/v1", "v1/", "a", "a/v1", "a/v2", "ab/v1", "a/v1/", "b/v1", "a//v1", "abv1", "a.v1"}
	var gvs []schema.GroupVersion
	for _, g := range []string{"", "a", "ab", "a/"} {
		for _, v := range []string{"v1", "v2", ""} {
			gvs = append(gvs, schema.GroupVersion{Group: g, Version: v})
		}
	}
	for _, text := range texts {
		for _, gv := range gvs {
			for _, kind := range []string{"Service", "Other"} {
				gvk := gv.WithKind("Service")
				got := &metav1.TypeMeta{APIVersion: text, Kind: kind}
				want := *got
				setKind(got, gvk)
				want.SetGroupVersionKind(gvk)
				if *got != want {
					t.Fatalf("%q %q set to %v: %v, want %v", text, kind, gvk, *got, want)
				}
			}
		}
	}
}

// TestElements: the count that sizes a list is its number of elements,
// whatever they hold, and 0 (a slice grown as it is read) where the
// array cannot be followed.
func TestElements(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{`[]`, 0},
		{`[1]`, 1},
		{`["a,b","c]"]`, 2},
		{`[{"a":[1,2,3]},{"b":{"c":[]}}]`, 2},
		{`[[1,2],[3],[]]`, 3},
		{`[{"a":1},{"b":2},{"c":3}],"x"`, 3},
		{`[1,2`, 0},
		{`["a,b`, 0},
		{` [1,2]`, 0},
	} {
		r := &jsonReader{b: []byte(c.in), ok: true}
		if got := r.elements(); got != c.want {
			t.Errorf("elements of %q = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestListsAreSized: the lists of a proxy read on the fast path, which it
// keeps as read, are made at their length, not grown past it.
func TestListsAreSized(t *testing.T) {
	const doc = `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: web, namespace: shop}
spec:
  virtualhost: {fqdn: web.example.com}
  routes:
  - conditions: [{prefix: /a}]
    services: [{name: a, port: 80}, {name: b, port: 80}, {name: c, port: 80}]
  - conditions: [{prefix: /b}]
    services: [{name: a, port: 80}]
  - services: [{name: c, port: 80}, {name: d, port: 80}, {name: e, port: 80}, {name: f, port: 80}, {name: g, port: 80}]
`
	objs, problems := decodeFile("p.yaml", []byte(doc), newOptions(nil).compact())
	if len(problems) > 0 || len(objs) != 1 {
		t.Fatalf("decoded %d objects, problems %v", len(objs), problems)
	}
	p, ok := objs[0].obj.(*switchyardv1.HTTPProxy)
	if !ok {
		t.Fatalf("decoded %T", objs[0].obj)
	}
	routes := p.Spec.Routes
	if len(routes) != 3 || cap(routes) != 3 {
		t.Errorf("routes: length %d, capacity %d, want 3 and 3", len(routes), cap(routes))
	}
	for i, r := range routes {
		if cap(r.Services) != len(r.Services) {
			t.Errorf("route %d: %d services in a slice of %d", i, len(r.Services), cap(r.Services))
		}
	}
}
