package dirsource

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// timeout bounds every wait for a batch. Tests never assert on timing: a
// test that would fail only waits this long before failing.
const timeout = 10 * time.Second

// harness runs a Watcher on a temporary tree and collects its batches.
type harness struct {
	t        *testing.T
	root     string
	w        *Watcher
	batches  chan Batch
	sentinel int
}

func startWatcher(t *testing.T, files map[string]string) *harness {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	w, err := NewWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, w: w, batches: make(chan Batch, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- w.Run(ctx, func(b Batch) {
			select {
			case h.batches <- b:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	// Once a first sentinel is seen, the watches are in place and the
	// rescan Run starts with is over: from here on, every read of a file
	// follows the event for a completed write.
	h.sync()
	return h
}

// next returns the next batch, failing the test after timeout.
func (h *harness) next() Batch {
	h.t.Helper()
	select {
	case b := <-h.batches:
		return b
	case <-time.After(timeout):
		h.t.Fatalf("no batch within %v", timeout)
		return Batch{}
	}
}

// sync writes a new sentinel file and collects batches until its object
// shows up. Events are handled in order, so every batch caused by an
// earlier change has been emitted by then. It returns the non-sentinel
// changes and how many batches carried them.
func (h *harness) sync() (changes []objects.Change, batches int) {
	h.t.Helper()
	h.sentinel++
	name := fmt.Sprintf("sentinel-%d", h.sentinel)
	writeTree(h.t, h.root, map[string]string{"zz-sentinels/" + name + ".yaml": svc("sentinel", name, 1)})
	for {
		b := h.next()
		seen, other := false, 0
		for _, c := range b.Changes {
			switch {
			case c.Key == key(objects.KindService, "sentinel", name):
				seen = true
			case c.Key.Namespace != "sentinel":
				changes = append(changes, c)
				other++
			}
		}
		if other > 0 {
			batches++
		}
		if seen {
			return changes, batches
		}
	}
}

// expectChanges checks changes against "upsert Kind ns/name port" or
// "delete Kind ns/name" lines (port only for Services).
func expectChanges(t *testing.T, got []objects.Change, want ...string) {
	t.Helper()
	var lines []string
	for _, c := range got {
		switch o := c.Object.(type) {
		case nil:
			lines = append(lines, "delete "+c.Key.String())
		case *objects.Service:
			lines = append(lines, fmt.Sprintf("upsert %s %d", c.Key, o.Spec.Ports[0].Port))
		default:
			lines = append(lines, "upsert "+c.Key.String())
		}
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
}

// overwrite replaces a file's content in place with one write and no
// truncation, as an editor saving in place does, so that the watcher sees
// one event for the complete content. new must not be shorter than old.
func overwrite(t *testing.T, path, content string) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(content) < len(old) {
		t.Fatalf("overwrite: new content is shorter than the old")
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(content), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// renameOver writes a temporary file next to path and renames it over
// path, as many editors and deploy tools do.
func renameOver(t *testing.T, path, tmpName, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), tmpName)
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestWatcherInitial(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.yaml": svc("x", "b", 1) + "---\n" + svc("x", "a", 1),
		"c.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
	})
	w, err := NewWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	b := w.Initial()
	expectChanges(t, b.Changes, "upsert Service x/a 1", "upsert Service x/b 1")
	matchProblems(t, b.Problems, []wantProblem{{severity: Warning, kind: "Deployment"}})

	if _, err := NewWatcher(filepath.Join(root, "missing")); err == nil {
		t.Error("NewWatcher on a missing directory: no error")
	}
}

func TestWatcher(t *testing.T) {
	two := svc("x", "a", 1) + "---\n" + svc("x", "b", 1)
	tests := []struct {
		name    string
		files   map[string]string
		act     func(t *testing.T, root string)
		want    []string
		batches int // batches carrying the changes; 0 when none are expected
	}{
		{
			name:  "edit one object in place",
			files: map[string]string{"a.yaml": two},
			act: func(t *testing.T, root string) {
				overwrite(t, filepath.Join(root, "a.yaml"), svc("x", "a", 1)+"---\n"+svc("x", "b", 2))
			},
			want:    []string{"upsert Service x/b 2"},
			batches: 1,
		},
		{
			name:  "delete a file",
			files: map[string]string{"a.yaml": two, "keep.yaml": svc("x", "c", 1)},
			act: func(t *testing.T, root string) {
				mustRemove(t, filepath.Join(root, "a.yaml"))
			},
			want:    []string{"delete Service x/a", "delete Service x/b"},
			batches: 1,
		},
		{
			name:  "add a file in a new subdirectory",
			files: map[string]string{"a.yaml": svc("x", "a", 1)},
			act: func(t *testing.T, root string) {
				writeTree(t, root, map[string]string{"new/deeper/c.yaml": svc("x", "c", 1)})
			},
			want:    []string{"upsert Service x/c 1"},
			batches: 1,
		},
		{
			name:  "whitespace and comment edit in place",
			files: map[string]string{"a.yaml": two},
			act: func(t *testing.T, root string) {
				overwrite(t, filepath.Join(root, "a.yaml"), "# edited\n\n"+strings.ReplaceAll(two, "\n", "  \n")+"\n\n")
			},
		},
		{
			name:  "whitespace edit renamed over",
			files: map[string]string{"a.yaml": two},
			act: func(t *testing.T, root string) {
				renameOver(t, filepath.Join(root, "a.yaml"), "a.yaml.tmp", "\n\n"+two)
			},
		},
		{
			name:  "rename over",
			files: map[string]string{"a.yaml": two},
			act: func(t *testing.T, root string) {
				renameOver(t, filepath.Join(root, "a.yaml"), "a.yaml.tmp", svc("x", "a", 1)+"---\n"+svc("x", "b", 3))
			},
			want:    []string{"upsert Service x/b 3"},
			batches: 1,
		},
		{
			name:  "rename over from a hidden temporary file",
			files: map[string]string{"sub/a.yaml": two},
			act: func(t *testing.T, root string) {
				renameOver(t, filepath.Join(root, "sub/a.yaml"), ".a.yaml.swp", svc("x", "a", 4)+"---\n"+svc("x", "b", 1))
			},
			want:    []string{"upsert Service x/a 4"},
			batches: 1,
		},
		{
			name: "deleting the winning definition hands over to the next",
			files: map[string]string{
				"a.yaml": svc("x", "dup", 1),
				"b.yaml": svc("x", "dup", 2),
			},
			act: func(t *testing.T, root string) {
				mustRemove(t, filepath.Join(root, "a.yaml"))
			},
			want:    []string{"upsert Service x/dup 2"},
			batches: 1,
		},
		{
			name:  "deleting the losing definition changes nothing",
			files: map[string]string{"a.yaml": svc("x", "dup", 1), "b.yaml": svc("x", "dup", 2)},
			act: func(t *testing.T, root string) {
				mustRemove(t, filepath.Join(root, "b.yaml"))
			},
		},
		{
			name:  "remove a directory",
			files: map[string]string{"sub/a.yaml": svc("x", "a", 1), "sub/deeper/b.yaml": svc("x", "b", 1)},
			act: func(t *testing.T, root string) {
				if err := os.RemoveAll(filepath.Join(root, "sub")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"delete Service x/a", "delete Service x/b"},
		},
		{
			name:  "hidden and non-manifest files are ignored",
			files: map[string]string{"a.yaml": two},
			act: func(t *testing.T, root string) {
				writeTree(t, root, map[string]string{".b.yaml": svc("x", "h", 1), "notes.txt": "x", ".git/c.yaml": svc("x", "g", 1)})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startWatcher(t, tt.files)
			tt.act(t, h.root)
			changes, batches := h.sync()
			expectChanges(t, changes, tt.want...)
			if tt.batches != 0 && batches != tt.batches {
				t.Errorf("changes came in %d batches, want %d", batches, tt.batches)
			}
		})
	}
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func TestWatcherProblems(t *testing.T) {
	h := startWatcher(t, map[string]string{"a.yaml": svc("x", "a", 1)})
	path := filepath.Join(h.root, "a.yaml")

	// Breaking the file deletes its object and reports where.
	renameOver(t, path, "tmp", "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n namespace: x\n")
	b := h.next()
	expectChanges(t, b.Changes, "delete Service x/a")
	matchProblems(t, b.Problems, []wantProblem{{line: 1, severity: Error, contains: "line"}})
	if b.Problems[0].File != path {
		t.Errorf("problem file = %s, want %s", b.Problems[0].File, path)
	}

	// Fixing it brings the object back and clears the problem.
	renameOver(t, path, "tmp", svc("x", "a", 1))
	b = h.next()
	expectChanges(t, b.Changes, "upsert Service x/a 1")
	if len(b.Problems) != 0 {
		t.Errorf("problems after the fix: %v", b.Problems)
	}

	// A change of problems alone is a batch too: the caller must hear that
	// a warning appeared even though no object changed.
	writeTree(t, h.root, map[string]string{"d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"})
	b = h.next()
	if len(b.Changes) != 0 || len(b.Problems) != 1 || b.Problems[0].Severity != Warning {
		t.Errorf("batch = %+v, want only a warning", b)
	}
}

func TestWatcherDirectoryRenamed(t *testing.T) {
	h := startWatcher(t, map[string]string{"team/a.yaml": svc("x", "a", 1)})

	// The same objects, now defined under another path. The kernel reports
	// the old name going and the new one coming as two events, which may
	// land in two batches (delete, then upsert); the net effect is nothing.
	if err := os.Rename(filepath.Join(h.root, "team"), filepath.Join(h.root, "team2")); err != nil {
		t.Fatal(err)
	}
	changes, _ := h.sync()
	if n := len(changes); n != 0 {
		expectChanges(t, changes, "delete Service x/a", "upsert Service x/a 1")
	}

	// The new name is watched.
	overwrite(t, filepath.Join(h.root, "team2/a.yaml"), svc("x", "a", 7))
	changes, _ = h.sync()
	expectChanges(t, changes, "upsert Service x/a 7")

	// Moving it out of the tree deletes its objects.
	if err := os.Rename(filepath.Join(h.root, "team2"), filepath.Join(t.TempDir(), "away")); err != nil {
		t.Fatal(err)
	}
	changes, _ = h.sync()
	expectChanges(t, changes, "delete Service x/a")
}

func TestWatcherRootMovedAway(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	writeTree(t, root, map[string]string{"a.yaml": svc("x", "a", 1)})
	w, err := NewWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	w.pollEvery = 20 * time.Millisecond
	batches := make(chan Batch, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, func(b Batch) { batches <- b }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	next := func() Batch {
		t.Helper()
		select {
		case b := <-batches:
			return b
		case <-time.After(timeout):
			t.Fatalf("no batch within %v", timeout)
			return Batch{}
		}
	}
	// Wait for Run to be watching: a new file shows up.
	writeTree(t, root, map[string]string{"b.yaml": svc("x", "b", 1)})
	expectChanges(t, next().Changes, "upsert Service x/b 1")

	away := root + ".old"
	if err := os.Rename(root, away); err != nil {
		t.Fatal(err)
	}
	b := next()
	expectChanges(t, b.Changes) // the last objects are kept
	matchProblems(t, b.Problems, []wantProblem{{severity: Error, contains: "serving the objects last read"}})

	overwrite(t, filepath.Join(away, "a.yaml"), svc("x", "a", 2))
	if err := os.Rename(away, root); err != nil {
		t.Fatal(err)
	}
	b = next()
	expectChanges(t, b.Changes, "upsert Service x/a 2")
	if len(b.Problems) != 0 {
		t.Errorf("problems once the root is back: %v", b.Problems)
	}
}

func TestWatcherRunTwice(t *testing.T) {
	w, err := NewWatcher(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Run(ctx, func(Batch) {}); err != nil {
		t.Fatalf("first Run: %v", err)
	}
	if err := w.Run(ctx, func(Batch) {}); err == nil {
		t.Error("second Run: no error")
	}
}

// watchFor gives w the file watcher Run would make, for a test that drives
// rescan and apply itself.
func watchFor(tb testing.TB, w *Watcher) {
	tb.Helper()
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = fsw.Close() })
	w.fsw, w.watched = fsw, map[string]bool{}
}

// TestWatcherRescan drives the fallback Run takes when fsnotify reports an
// overflow or an error: events were lost, so the whole tree is compared
// with what was read before.
func TestWatcherRescan(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.yaml":     svc("x", "a", 1),
		"b.yaml":     svc("x", "b", 1),
		"same.yaml":  svc("x", "same", 1),
		"sub/c.yaml": svc("x", "c", 1),
	})
	w, err := NewWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	watchFor(t, w)
	w.rescan()
	w.flush(func(b Batch) { t.Errorf("rescan of an unchanged tree emitted %+v", b) })
	if !w.watched["sub"] {
		t.Fatalf("sub is not watched; watched: %v", w.watched)
	}

	// Changes nobody was told about.
	writeTree(t, root, map[string]string{
		"a.yaml":          svc("x", "a", 2),
		"same.yaml":       "# reformatted\n" + svc("x", "same", 1),
		"new/deep/d.yaml": svc("x", "d", 1),
	})
	mustRemove(t, filepath.Join(root, "b.yaml"))
	if err := os.RemoveAll(filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}

	w.apply(&pending{full: true})
	var got []Batch
	w.flush(func(b Batch) { got = append(got, b) })
	if len(got) != 1 {
		t.Fatalf("got %d batches, want 1", len(got))
	}
	expectChanges(t, got[0].Changes,
		"upsert Service x/a 2", "delete Service x/b", "delete Service x/c", "upsert Service x/d 1")
	for _, dir := range []string{".", "new", filepath.Join("new", "deep")} {
		if !w.watched[dir] {
			t.Errorf("%s is not watched after the rescan; watched: %v", dir, w.watched)
		}
	}
	if w.watched["sub"] {
		t.Error("the removed directory sub is still watched")
	}
}

// TestRescanSeesChangesSinceNewWatcher checks that the rescan Run starts
// with picks up a file rewritten in place, to the same size, right after
// NewWatcher read it: changed within racyMargin of that read, its identity
// is not trusted (TestRescanRereadsRacyFiles pins that down with a clock
// of its own; here the write may even share the read's timestamp tick).
func TestRescanSeesChangesSinceNewWatcher(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.yaml": svc("x", "a", 1)})
	w, err := NewWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	overwrite(t, filepath.Join(root, "a.yaml"), svc("x", "a", 2))
	watchFor(t, w)
	w.rescan()
	var got []Batch
	w.flush(func(b Batch) { got = append(got, b) })
	if len(got) != 1 {
		t.Fatalf("got %d batches, want 1", len(got))
	}
	expectChanges(t, got[0].Changes, "upsert Service x/a 2")
}
