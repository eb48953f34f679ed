package dirsource

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestStamps follows one directory through the edits that must keep an
// object's first-seen time and those that must give it a new one. The
// tree is synced by hand and the clock is the test's, so that which batch
// an event lands in, and how much time passes, is decided here.
func TestStamps(t *testing.T) {
	// Secrets, not Services: a snapshot holds a Service in a form of its
	// own, without metadata a build does not read.
	root := t.TempDir()
	start := time.Date(2026, 12, 1, 10, 0, 0, 500_000_000, time.UTC)
	now := start
	writeTree(t, root, map[string]string{
		// A creationTimestamp in a file is replaced: it could otherwise
		// make a newcomer older than the proxy it wants a host name from.
		"a.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: a, namespace: ns, creationTimestamp: \"2000-01-01T00:00:00Z\"}\nstringData: {port: \"80\"}\n",
		"b.yaml": secret("ns", "b", 80),
	})
	tr := newTree(root, newOptions(nil))
	tr.sync(".", nil, false)
	w := newWatcher(tr, func() time.Time { return now })

	stamps := map[objects.Key]time.Time{}
	record := func(cs []objects.Change) {
		for _, c := range cs {
			if c.Object == nil {
				delete(stamps, c.Key)
				continue
			}
			m, err := meta.Accessor(c.Object)
			if err != nil {
				t.Fatal(err)
			}
			stamps[c.Key] = m.GetCreationTimestamp().Time
		}
	}
	batch := func() []objects.Change {
		tr.sync(".", nil, false)
		cs := tr.changes()
		record(cs)
		return cs
	}
	a, b, c := key(objects.KindSecret, "ns", "a"), key(objects.KindSecret, "ns", "b"), key(objects.KindSecret, "ns", "c")
	want := func(step string, k objects.Key, at time.Time) {
		t.Helper()
		if got, ok := stamps[k]; !ok || !got.Equal(at) {
			t.Errorf("%s: %v stamped %v (present %v), want %v", step, k, got, ok, at)
		}
	}
	second := start.Truncate(time.Second)

	record(w.Initial().Changes)
	want("initial load", a, second)
	want("initial load", b, second)

	writeTree(t, root, map[string]string{"c.yaml": secret("ns", "c", 80)})
	batch()
	want("added in the same second", c, second.Add(time.Second))

	now = now.Add(5 * time.Second)
	writeTree(t, root, map[string]string{"a.yaml": secret("ns", "a", 81)})
	if cs := batch(); len(cs) != 1 {
		t.Fatalf("editing a: %d changes, want 1", len(cs))
	}
	want("edited", a, second)
	writeTree(t, root, map[string]string{"a.yaml": "# a comment\n" + secret("ns", "a", 81)})
	if cs := batch(); len(cs) != 0 {
		t.Errorf("a comment added: %d changes, want none (the stamped object must equal its re-read)", len(cs))
	}

	if err := os.MkdirAll(filepath.Join(root, "moved"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "b.yaml"), filepath.Join(root, "moved", "b.yaml")); err != nil {
		t.Fatal(err)
	}
	batch()
	want("moved to another directory", b, second)

	// A move seen as two batches: the object is gone for a moment.
	if err := os.Rename(filepath.Join(root, "c.yaml"), filepath.Join(root, "d.yaml")); err != nil {
		t.Fatal(err)
	}
	tr.sync("c.yaml", nil, false)
	record(tr.changes())
	if _, ok := stamps[c]; ok {
		t.Fatal("c still present after its file went")
	}
	now = now.Add(renameGrace)
	batch()
	want("back within the grace period", c, second.Add(time.Second))

	if err := os.Remove(filepath.Join(root, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	batch()
	now = now.Add(renameGrace + time.Second)
	writeTree(t, root, map[string]string{"a.yaml": secret("ns", "a", 80)})
	batch()
	want("deleted, then added again later", a, now.Truncate(time.Second))
}

// secret is a manifest of one Secret whose content says port.
func secret(ns, name string, port int) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
		"\nstringData:\n  port: \"" + strconv.Itoa(port) + "\"\n"
}

// TestCompactObjectsTakeNoStamp: a Service and an EndpointSlice are held
// in compact forms with no creationTimestamp, so the stamper keeps no
// entry for them, while the Secret beside them is stamped.
func TestCompactObjectsTakeNoStamp(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.yaml": secret("ns", "a", 80) + "---\n" +
			"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ns}\nspec: {ports: [{port: 80}]}\n---\n" +
			"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, namespace: ns, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\n",
	})
	tr := newTree(root, newOptions(nil))
	tr.sync(".", nil, false)
	w := newWatcher(tr, time.Now)
	if n := len(w.Initial().Changes); n != 3 {
		t.Fatalf("%d changes, want 3 (%v)", n, w.Initial().Problems)
	}
	if _, ok := tr.stamps.seen[key(objects.KindSecret, "ns", "a")]; !ok {
		t.Error("the Secret has no stamp")
	}
	for _, k := range []objects.Key{key(objects.KindService, "ns", "web"), key(objects.KindEndpointSlice, "ns", "web-1")} {
		if _, ok := tr.stamps.seen[k]; ok {
			t.Errorf("%v has a stamp entry; its compact form holds no timestamp", k)
		}
	}
}
