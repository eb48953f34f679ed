package dirsource_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// TestBadCoreObjectChangesNothingElse adds a core object the API server
// would refuse to the quickstart and checks that it is reported, that
// every other object still loads unchanged, and that what render prints is
// byte for byte what it printed before. Each bad object is written in a
// file that sorts first and has the key of an object the quickstart
// serves, so had it been accepted it would have won over the good one and
// changed the output; the valid twin of each case checks exactly that, so
// the test can fail.
func TestBadCoreObjectChangesNothingElse(t *testing.T) {
	tests := []struct {
		name, bad, want string
		fix             []string // old, new pairs that make bad valid
	}{
		{
			name: "EndpointSlice",
			bad: `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: storefront-v1-us-east-1a
  namespace: shop
  labels: {kubernetes.io/service-name: storefront-v1}
addressType: IPv4
ports: [{name: http, port: 70000}]
endpoints: [{addresses: [10.0.0.999], conditions: {ready: true}}]
`,
			fix: []string{"70000", "8080", "10.0.0.999", "10.0.0.9"},
			want: `00-bad.yaml:1: EndpointSlice shop/storefront-v1-us-east-1a: endpoints[0].addresses[0]: Invalid value: "10.0.0.999": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff); ` +
				`ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`,
		},
		{
			name: "Service",
			bad: `apiVersion: v1
kind: Service
metadata: {name: storefront-v1, namespace: shop}
spec: {ports: [{name: http, port: 70000, targetPort: 8080}]}
`,
			fix:  []string{"70000", "81"},
			want: `00-bad.yaml:1: Service shop/storefront-v1: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`,
		},
		{
			name: "Secret",
			bad: `apiVersion: v1
kind: Secret
metadata: {name: shop-example-tls, namespace: infra}
type: kubernetes.io/tls
stringData: {tls.crt: x, tls-key: x}
`,
			fix:  []string{"tls-key", "tls.key"},
			want: `00-bad.yaml:1: Secret infra/shop-example-tls: data[tls.key]: Required value: a Secret of type kubernetes.io/tls needs it`,
		},
	}
	root := t.TempDir()
	copyDir(t, "../../examples/quickstart", root)
	good, goodOut := load(t, root, []string{})
	bad := filepath.Join(root, "00-bad.yaml")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write(t, bad, tt.bad)
			t.Cleanup(func() { _ = os.Remove(bad) })
			snap, out := load(t, root, []string{tt.want})
			if !equality.Semantic.DeepEqual(snap, good) {
				t.Error("the objects loaded are not those of the quickstart alone")
			}
			if !bytes.Equal(out, goodOut) {
				t.Errorf("render output changed:\n%s", out)
			}

			write(t, bad, strings.NewReplacer(tt.fix...).Replace(tt.bad))
			if _, out := load(t, root, nil); bytes.Equal(out, goodOut) {
				t.Error("the valid twin of the bad object does not change the output either: the case proves nothing")
			}
		})
	}
}

// load reads root and renders it for Envoy, failing unless the problems
// are exactly want (nil: not checked), with the root taken off their paths.
func load(t *testing.T, root string, want []string) (*objects.Snapshot, []byte) {
	t.Helper()
	snap, problems, err := dirsource.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, strings.TrimPrefix(p.String(), root+string(filepath.Separator)))
	}
	if want != nil && strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := out.Encode("yaml")
	if err != nil {
		t.Fatal(err)
	}
	return snap, b
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(to, e.Name()), string(b))
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
