package dirsource

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

const (
	proxyYAML = `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata:
  name: web
  namespace: shop
spec:
  virtualhost:
    fqdn: shop.example.com
  routes:
  - services:
    - name: web
      port: 80
`
	serviceYAML = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  ports:
  - port: 80
`
)

func key(kind objects.Kind, ns, name string) objects.Key {
	return objects.Key{Kind: kind, Namespace: ns, Name: name}
}

func keysOf(ds []decoded) []objects.Key {
	var out []objects.Key
	for _, d := range ds {
		out = append(out, d.key)
	}
	return out
}

func TestDecodeEveryKind(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  objects.Key
		check func(t *testing.T, obj any)
	}{
		{
			name:  "HTTPProxy",
			input: proxyYAML,
			want:  key(objects.KindHTTPProxy, "shop", "web"),
			check: func(t *testing.T, obj any) {
				p := obj.(*switchyardv1.HTTPProxy)
				if p.Spec.VirtualHost.Fqdn != "shop.example.com" || p.Spec.Routes[0].Services[0].Port != 80 {
					t.Errorf("spec not decoded: %+v", p.Spec)
				}
			},
		},
		{
			name: "TLSCertificateDelegation",
			input: `apiVersion: switchyard.dev/v1
kind: TLSCertificateDelegation
metadata: {name: certs, namespace: tls}
spec:
  delegations:
  - secretName: wildcard
    targetNamespaces: ["*"]
`,
			want: key(objects.KindTLSCertificateDelegation, "tls", "certs"),
			check: func(t *testing.T, obj any) {
				d := obj.(*switchyardv1.TLSCertificateDelegation)
				if d.Spec.Delegations[0].SecretName != "wildcard" {
					t.Errorf("spec not decoded: %+v", d.Spec)
				}
			},
		},
		{
			name: "ExtensionService",
			input: `apiVersion: switchyard.dev/v1alpha1
kind: ExtensionService
metadata: {name: authz, namespace: auth}
spec:
  protocol: h2c
  services:
  - name: authz
    port: 9000
`,
			want: key(objects.KindExtensionService, "auth", "authz"),
			check: func(t *testing.T, obj any) {
				e := obj.(*switchyardv1alpha1.ExtensionService)
				if *e.Spec.Protocol != "h2c" || e.Spec.Services[0].Port != 9000 {
					t.Errorf("spec not decoded: %+v", e.Spec)
				}
			},
		},
		{
			name:  "Service",
			input: serviceYAML,
			want:  key(objects.KindService, "shop", "web"),
			check: func(t *testing.T, obj any) {
				if s := obj.(*objects.Service); s.Spec.Ports[0].Port != 80 {
					t.Errorf("spec not decoded: %+v", s.Spec)
				}
			},
		},
		{
			name: "EndpointSlice",
			input: `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abc
  namespace: shop
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
endpoints:
- addresses: ["10.0.0.1"]
  conditions: {ready: true}
ports:
- port: 8080
`,
			want: key(objects.KindEndpointSlice, "shop", "web-abc"),
			check: func(t *testing.T, obj any) {
				es := obj.(*objects.EndpointSlice)
				if es.Endpoints[0].Address != "10.0.0.1" || *es.Ports[0].Port != 8080 {
					t.Errorf("slice not decoded: %+v", es)
				}
			},
		},
		{
			name: "Secret",
			input: `apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: shop}
type: kubernetes.io/tls
data:
  tls.crt: Y2VydA==
  tls.key: a2V5
`,
			want: key(objects.KindSecret, "shop", "tls"),
			check: func(t *testing.T, obj any) {
				if s := obj.(*corev1.Secret); string(s.Data["tls.crt"]) != "cert" {
					t.Errorf("data not decoded: %q", s.Data)
				}
			},
		},
		{
			name: "Node",
			input: `apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {topology.kubernetes.io/zone: a}
`,
			want: key(objects.KindNode, "", "node-1"),
			check: func(t *testing.T, obj any) {
				if n := obj.(*corev1.Node); n.Labels["topology.kubernetes.io/zone"] != "a" {
					t.Errorf("labels not decoded: %v", n.Labels)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, problems := decodeFile("f.yaml", []byte(tt.input), newOptions(nil).compact())
			if len(problems) != 0 {
				t.Fatalf("problems: %v", problems)
			}
			if len(objs) != 1 || objs[0].key != tt.want {
				t.Fatalf("got %v, want %v", keysOf(objs), tt.want)
			}
			if gvk := objs[0].obj.GetObjectKind().GroupVersionKind(); gvk.Kind != tt.want.Kind.String() {
				t.Errorf("TypeMeta kind = %q, want %q", gvk.Kind, tt.want.Kind)
			}
			tt.check(t, objs[0].obj)
		})
	}
}

// wantProblem matches a Problem: every set field must be equal, and
// Message must contain contains.
type wantProblem struct {
	line     int
	severity Severity
	kind     string
	name     string
	contains string
}

func TestDecodeProblems(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantKeys []objects.Key
		want     []wantProblem
	}{
		{
			name: "broken document in the middle",
			input: serviceYAML + `---
# the second document
apiVersion: v1
kind: Service
metadata:
  name: broken
 namespace: shop
---
` + proxyYAML,
			wantKeys: []objects.Key{key(objects.KindService, "shop", "web"), key(objects.KindHTTPProxy, "shop", "web")},
			// The document starts on line 11 (after "---" and the
			// comment). The bad indentation is on line 15; the YAML
			// parser names the line of the key before it, 14, which
			// is 4 in the document, counted from the top of the file.
			want: []wantProblem{{line: 11, severity: Error, contains: "line 14:"}},
		},
		{
			name: "unknown field",
			input: `apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: web}
spec:
  virtualhost:
    fqdnn: shop.example.com
`,
			want: []wantProblem{{line: 1, severity: Error, kind: "HTTPProxy", name: "web",
				contains: `unknown field "spec.virtualhost.fqdnn"`}},
		},
		{
			name: "wrong type",
			input: `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports:
  - port: eighty
`,
			want: []wantProblem{{line: 1, severity: Error, kind: "Service", name: "web", contains: "port"}},
		},
		{
			name: "duplicate field",
			input: `apiVersion: v1
kind: Service
metadata:
  name: web
  name: web2
`,
			want: []wantProblem{{line: 1, severity: Error, kind: "Service", contains: `line 5: key "name" already set`}},
		},
		{
			name: "unknown kind is a warning",
			input: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 2}
---
` + serviceYAML,
			wantKeys: []objects.Key{key(objects.KindService, "shop", "web")},
			want: []wantProblem{{line: 1, severity: Warning, kind: "Deployment", name: "web",
				contains: "kind Deployment (apps/v1) is not read by switchyard; skipped"}},
		},
		{
			name: "Contour apiVersion is an error with a hint",
			input: `apiVersion: projectcontour.io/v1
kind: HTTPProxy
metadata: {name: web}
`,
			want: []wantProblem{{severity: Error, kind: "HTTPProxy", contains: "change apiVersion to switchyard.dev/v1"}},
		},
		{
			name:  "missing kind",
			input: "apiVersion: v1\nmetadata: {name: x}\n",
			want:  []wantProblem{{line: 1, severity: Error, contains: "kind missing"}},
		},
		{
			name:  "missing name",
			input: "apiVersion: v1\nkind: Service\nmetadata: {generateName: web-}\n",
			want:  []wantProblem{{line: 1, severity: Error, kind: "Service", contains: "metadata.name is required"}},
		},
		{
			name:  "invalid name",
			input: "apiVersion: v1\nkind: Secret\nmetadata: {name: Not_Valid}\n",
			want:  []wantProblem{{line: 1, severity: Error, kind: "Secret", name: "Not_Valid", contains: "metadata.name"}},
		},
		{
			name:  "invalid namespace",
			input: "apiVersion: v1\nkind: Secret\nmetadata: {name: ok, namespace: a.b}\n",
			want:  []wantProblem{{severity: Error, kind: "Secret", contains: "metadata.namespace"}},
		},
		{
			name:  "document that is not an object",
			input: "- a\n- b\n",
			want:  []wantProblem{{line: 1, severity: Error, contains: "document is a list"}},
		},
		{
			name:     "empty and comment-only documents are skipped",
			input:    "---\n\n---\n# just a comment\n---\n" + serviceYAML + "---\n...\n",
			wantKeys: []objects.Key{key(objects.KindService, "shop", "web")},
		},
		{
			name: "List items decode recursively",
			input: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: a}
  spec: {ports: [{port: 80}]}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: d}
- apiVersion: v1
  kind: List
  items:
  - apiVersion: v1
    kind: Node
    metadata: {name: node-1}
  - apiVersion: v1
    kind: Service
    metadata: {name: b}
    spek: {}
`,
			wantKeys: []objects.Key{key(objects.KindService, "default", "a"), key(objects.KindNode, "", "node-1")},
			want: []wantProblem{
				{line: 1, severity: Warning, kind: "Deployment", contains: "items[1]: kind Deployment"},
				{line: 1, severity: Error, kind: "Service", name: "b", contains: `items[2]: items[1]: strict decoding error: unknown field "spek"`},
			},
		},
		{
			name: "typed list",
			input: `apiVersion: switchyard.dev/v1
kind: HTTPProxyList
items:
- metadata: {name: a}
  spec: {}
- metadata: {name: b, namespace: x}
  spec: {}
`,
			wantKeys: []objects.Key{key(objects.KindHTTPProxy, "default", "a"), key(objects.KindHTTPProxy, "x", "b")},
		},
		{
			name:  "unknown field on the List itself",
			input: "apiVersion: v1\nkind: List\nitemz: []\n",
			want:  []wantProblem{{severity: Error, kind: "List", contains: `unknown field "itemz"`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, problems := decodeFile("f.yaml", []byte(tt.input), newOptions(nil).compact())
			if got := keysOf(objs); !equalKeys(got, tt.wantKeys) {
				t.Errorf("keys = %v, want %v", got, tt.wantKeys)
			}
			matchProblems(t, problems, tt.want)
		})
	}
}

func equalKeys(a, b []objects.Key) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func matchProblems(t *testing.T, got []Problem, want []wantProblem) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), problemLines(got))
	}
	for i, w := range want {
		g := got[i]
		if w.line != 0 && g.Line != w.line ||
			w.severity != 0 && g.Severity != w.severity ||
			w.kind != "" && g.Kind != w.kind ||
			w.name != "" && g.Name != w.name ||
			!strings.Contains(g.Message, w.contains) {
			t.Errorf("problem %d = %s (%v), want %+v", i, g, g.Severity, w)
		}
	}
}

func problemLines(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.Severity.String() + ": " + p.String() + "\n")
	}
	return b.String()
}

func TestDecodeCompletesObjects(t *testing.T) {
	input := `apiVersion: v1
kind: Secret
metadata: {name: s}
data: {a: b2xk, b: Yg==}
stringData: {a: new, c: c}
---
apiVersion: v1
kind: Node
metadata: {name: node-1, namespace: ignored}
`
	objs, problems := decodeFile("f.yaml", []byte(input), newOptions(nil).compact())
	if len(problems) != 0 || len(objs) != 2 {
		t.Fatalf("objs %v, problems %v", keysOf(objs), problems)
	}
	s := objs[0].obj.(*corev1.Secret)
	if s.Namespace != "default" {
		t.Errorf("secret namespace = %q, want default", s.Namespace)
	}
	want := map[string]string{"a": "new", "b": "b", "c": "c"}
	if len(s.Data) != len(want) || s.StringData != nil {
		t.Errorf("data = %q, stringData = %q; want data %q and no stringData", s.Data, s.StringData, want)
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, s.Data[k], v)
		}
	}
	if n := objs[1].obj.(*corev1.Node); n.Namespace != "" || objs[1].key.Namespace != "" {
		t.Errorf("node namespace = %q, want none", n.Namespace)
	}
	if objs[1].line != 7 {
		t.Errorf("node line = %d, want 7", objs[1].line)
	}
}

func TestSplitDocuments(t *testing.T) {
	tests := []struct {
		name  string
		input string
		lines []int
	}{
		{"single", "a: 1\n", []int{1}},
		{"leading separator", "---\na: 1\n", []int{2}},
		{"separator with comment", "a: 1\n--- # next\n\n# about b\nb: 2\n", []int{1, 5}},
		{"separator with trailing blanks and CRLF", "a: 1\r\n---  \r\nb: 2\r\n", []int{1, 3}},
		{"not a separator", "a: |\n  x\n---x: 1\n", []int{1}},
		{"byte order mark", "\xef\xbb\xbfa: 1\n---\nb: 2", []int{1, 3}},
		{"document end marker", "a: 1\n...\nb: 2\n", []int{1, 3}},
		{"only comments", "# a\n---\n# b\n", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, d := range splitDocuments([]byte(tt.input)) {
				got = append(got, d.line)
			}
			if len(got) != len(tt.lines) {
				t.Fatalf("lines = %v, want %v", got, tt.lines)
			}
			for i := range got {
				if got[i] != tt.lines[i] {
					t.Fatalf("lines = %v, want %v", got, tt.lines)
				}
			}
		})
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "m/a.yaml", Line: 12, Kind: "HTTPProxy", Namespace: "default", Name: "foo", Message: "bad"},
			"m/a.yaml:12: HTTPProxy default/foo: bad"},
		{Problem{File: "m/a.yaml", Line: 3, Kind: "Node", Name: "n", Message: "bad"}, "m/a.yaml:3: Node n: bad"},
		{Problem{File: "m/a.yaml", Line: 3, Kind: "Service", Message: "no name"}, "m/a.yaml:3: Service: no name"},
		{Problem{File: "m/big.yaml", Message: "too large"}, "m/big.yaml: too large"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	if Warning.String() != "warning" || Error.String() != "error" || Severity(0).String() != "Severity(0)" {
		t.Errorf("severity names: %v %v %v", Warning, Error, Severity(0))
	}
}

// TestDecodeLargeFileInParallel decodes a file large enough to be cut
// into chunks decoded at once, with problems among its documents, and
// requires what decoding it in turn gives: the same objects, lines and
// problems, in the same order.
func TestDecodeLargeFileInParallel(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 2*parallelFileSize; i++ {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: s%d, namespace: ns}\nspec: {ports: [{port: 80}]}\n---\n", i)
		if i%500 == 7 {
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: bad%d, namespace: ns}\nspec: {ports: [{port: 0}]}\n---\nnot: [valid\n---\n", i)
		}
	}
	data := []byte(b.String())
	objs, problems := decodeFile("big.yaml", data, newOptions(nil).compact())
	wantObjs, wantProblems := decodeDocs("big.yaml", splitDocuments(data), newOptions(nil).compact())
	if len(objs) != len(wantObjs) || len(objs) < 1000 {
		t.Fatalf("%d objects, in turn %d", len(objs), len(wantObjs))
	}
	for i := range objs {
		if objs[i].key != wantObjs[i].key || objs[i].line != wantObjs[i].line || !reflect.DeepEqual(objs[i].obj, wantObjs[i].obj) {
			t.Fatalf("object %d: %v line %d, in turn %v line %d", i, objs[i].key, objs[i].line, wantObjs[i].key, wantObjs[i].line)
		}
	}
	if !reflect.DeepEqual(problems, wantProblems) || len(problems) < 4 {
		t.Fatalf("problems differ:\n%v\nin turn:\n%v", problems, wantProblems)
	}
}

// TestSortInParallel: the two sorted halves merge into what one sort
// gives, above the length that splits the work and below it.
func TestSortInParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, parallelSort - 1, parallelSort, 3*parallelSort + 7} {
		in := rng.Perm(n)
		want := slices.Sorted(slices.Values(in))
		got := sortInParallel(slices.Clone(in), cmp.Compare[int])
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: not sorted as one sort sorts", n)
		}
	}
}
