package dirsource

import (
	"testing"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// FuzzDecode checks that no input panics the decoder and that every object
// it returns has a key a Snapshot can hold: a kind it knows, a name, and a
// namespace exactly when the kind is namespaced, and fields the API server
// would accept. Seeds are in
// testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(proxyYAML + "---\n" + serviceYAML))
	f.Add([]byte(goodBefore + "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: ns}\n" +
		"addressType: IPv6\nendpoints: [{addresses: [\"2001:db8::1\"], nodeName: n1}]\nports: [{name: http, port: 8080}]\n" + goodAfter))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, problems := decodeFile("fuzz.yaml", data, newOptions(nil).compact())
		for _, d := range objs {
			k, err := objects.KeyOf(d.obj)
			if err != nil {
				t.Fatalf("object of unsupported type %T", d.obj)
			}
			if k != d.key {
				t.Fatalf("key %v, but the object's is %v", d.key, k)
			}
			if k.Name == "" || (k.Kind == objects.KindNode) != (k.Namespace == "") {
				t.Fatalf("invalid key %#v", k)
			}
			if msg := validateKey(k, ""); msg != "" {
				t.Fatalf("key %v: %s", k, msg)
			}
			if msg := validateObject(d.obj); msg != "" {
				t.Fatalf("%v: %s", k, msg)
			}
			if d.line < 1 {
				t.Fatalf("object %v on line %d", k, d.line)
			}
			snap := objects.NewSnapshot()
			if _, err := snap.Upsert(d.obj); err != nil {
				t.Fatalf("Upsert: %v", err)
			}
		}
		for _, p := range problems {
			if p.Severity != Warning && p.Severity != Error {
				t.Fatalf("problem without severity: %v", p)
			}
			if p.Line < 1 {
				t.Fatalf("document problem without a line: %v", p)
			}
		}
	})
}
