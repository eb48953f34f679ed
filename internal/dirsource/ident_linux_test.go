package dirsource

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// forged replaces the hash of every file a test has read: a read puts the
// true hash back, so a file that still has it was not read again.
var forged = [sha256.Size]byte{1}

func forgeSums(tr *tree) {
	for _, st := range tr.files {
		st.sum = forged
	}
}

// expectRead checks which of rels were read since forgeSums.
func expectRead(t *testing.T, step string, tr *tree, want map[string]bool) {
	t.Helper()
	for rel, read := range want {
		st := tr.files[rel]
		if st == nil {
			t.Fatalf("%s: %s is not in the tree", step, rel)
		}
		if got := st.sum != forged; got != read {
			t.Errorf("%s: %s read again = %v, want %v", step, rel, got, read)
		}
	}
}

// oldTree reads root with a clock an hour ahead, so that every file in it
// is old enough for its identity to be trusted.
func oldTree(t *testing.T, root string) *tree {
	t.Helper()
	tr := newTree(root, newOptions(nil))
	later := time.Now().Add(time.Hour)
	tr.clock = func() time.Time { return later }
	tr.sync(".", nil, false)
	tr.changes()
	for rel, st := range tr.files {
		if !st.read || st.ident == 0 {
			t.Fatalf("%s: read %v, identity %d: want a trusted identity", rel, st.read, st.ident)
		}
	}
	return tr
}

// TestRescanSkipsUnchangedFiles checks that Run's rescans (the first one,
// after an overflow) read no file whose identity is unchanged and trusted,
// and that paths named by events are read whatever their identity.
func TestRescanSkipsUnchangedFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.yaml": svc("x", "a", 1), "sub/b.yaml": svc("x", "b", 1)})
	tr := oldTree(t, root)
	w := newWatcher(tr, time.Now)
	watchFor(t, w)
	b := filepath.Join("sub", "b.yaml")

	forgeSums(tr)
	w.rescan()
	expectRead(t, "rescan", tr, map[string]bool{"a.yaml": false, b: false})

	w.apply(&pending{paths: map[string]bool{"a.yaml": true}})
	expectRead(t, "event for a.yaml", tr, map[string]bool{"a.yaml": true, b: false})

	forgeSums(tr)
	w.apply(&pending{paths: map[string]bool{"sub": true}})
	expectRead(t, "event for the directory sub", tr, map[string]bool{"a.yaml": false, b: true})

	forgeSums(tr)
	w.apply(&pending{full: true})
	expectRead(t, "rescan after an overflow", tr, map[string]bool{"a.yaml": false, b: false})
	w.flush(func(b Batch) { t.Errorf("nothing changed, yet a batch: %+v", b) })
}

// TestRescanSeesReplacedFiles replaces files with others of the same size
// and modification time, which their inode (and change time) tell apart,
// and checks that a rescan reads them.
func TestRescanSeesReplacedFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"renamed.yaml":   svc("x", "a", 1),
		".v1/cm.yaml":    svc("x", "cm", 1),
		"unchanged.yaml": svc("x", "u", 1),
	})
	mustSymlink(t, ".v1", filepath.Join(root, "..data"))
	mustSymlink(t, filepath.Join("..data", "cm.yaml"), filepath.Join(root, "cm.yaml"))
	tr := oldTree(t, root)
	if len(tr.files) != 3 {
		t.Fatalf("files read: %v, want renamed.yaml, cm.yaml and unchanged.yaml", tr.files)
	}

	// The same size and modification time, another file.
	renamed := filepath.Join(root, "renamed.yaml")
	mtime := modTime(t, renamed)
	renameOver(t, renamed, "tmp", svc("x", "a", 2))
	setModTime(t, renamed, mtime)
	// A ConfigMap volume's swap: a new directory, then ..data renamed over
	// to point at it.
	writeTree(t, root, map[string]string{".v2/cm.yaml": svc("x", "cm", 2)})
	setModTime(t, filepath.Join(root, ".v2", "cm.yaml"), modTime(t, filepath.Join(root, ".v1", "cm.yaml")))
	mustSymlink(t, ".v2", filepath.Join(root, "..tmp"))
	if err := os.Rename(filepath.Join(root, "..tmp"), filepath.Join(root, "..data")); err != nil {
		t.Fatal(err)
	}

	forgeSums(tr)
	tr.sync(".", nil, true)
	expectRead(t, "rescan", tr, map[string]bool{"renamed.yaml": true, "cm.yaml": true, "unchanged.yaml": false})
	expectChanges(t, tr.changes(), "upsert Service x/a 2", "upsert Service x/cm 2")
}

func modTime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

func setModTime(t *testing.T, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, time.Time{}, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestRescanRereadsRacyFiles checks that a file changed less than
// racyMargin before a read is read again by the next rescan even though
// nothing in its Stat changed: a write in the same timestamp tick as the
// Stat before that read would not show. The clock is set from the file's
// own change time, so that how fast the test runs does not matter.
func TestRescanRereadsRacyFiles(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{name: "written just now", prepare: func(*testing.T, string) {}},
		{
			name: "modification time set back, changed just now",
			prepare: func(t *testing.T, path string) {
				old := time.Now().Add(-time.Hour)
				if err := os.Chtimes(path, old, old); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{"a.yaml": svc("x", "a", 1)})
			path := filepath.Join(root, "a.yaml")
			tt.prepare(t, path)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			at := ctime(t, fi).Add(racyMargin / 2)
			tr := newTree(root, newOptions(nil))
			tr.clock = func() time.Time { return at }
			tr.sync(".", nil, false)
			if id := tr.files["a.yaml"].ident; id != 0 {
				t.Fatalf("identity %d, want 0 (not to be trusted)", id)
			}
			forgeSums(tr)
			tr.sync(".", nil, true)
			expectRead(t, "rescan", tr, map[string]bool{"a.yaml": true})

			// Read again once old enough, its identity is trusted.
			at = at.Add(time.Hour)
			tr.sync(".", nil, true)
			forgeSums(tr)
			tr.sync(".", nil, true)
			expectRead(t, "rescan once old", tr, map[string]bool{"a.yaml": false})
		})
	}
}

func ctime(t *testing.T, fi fs.FileInfo) time.Time {
	t.Helper()
	_, _, c, ok := statIdentity(fi)
	if !ok {
		t.Fatalf("no change time in %T", fi.Sys())
	}
	return c
}

// TestRescanRereadsFailedFiles checks that a file whose last read failed
// is read again by a rescan, so that its problem goes once it is fixed.
func TestRescanRereadsFailedFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.yaml": svc("x", "a", 1)})
	tr := newTree(root, newOptions([]Option{WithMaxFileSize(10)}))
	later := time.Now().Add(time.Hour)
	tr.clock = func() time.Time { return later }
	tr.sync(".", nil, false)
	if len(tr.problems()) != 1 {
		t.Fatalf("problems: %v, want one for a file over the limit", tr.problems())
	}
	tr.maxSize = DefaultMaxFileSize // the limit raised behind the tree's back
	tr.sync(".", nil, true)
	if ps := tr.problems(); len(ps) != 0 {
		t.Errorf("problems after the rescan: %v, want none", ps)
	}
	expectChanges(t, tr.changes(), "upsert Service x/a 1")
}

// fakeInfo is a file's Stat with the fields identOf reads.
type fakeInfo struct {
	fs.FileInfo
	size  int64
	mtime time.Time
	sys   any
}

func (f fakeInfo) Size() int64        { return f.size }
func (f fakeInfo) ModTime() time.Time { return f.mtime }
func (f fakeInfo) Sys() any           { return f.sys }

// TestIdentOf checks that every field of a Stat tells identities apart,
// and that no identity is given to a file changed within racyMargin.
func TestIdentOf(t *testing.T) {
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	old := at.Add(-time.Hour)
	base := func() (fakeInfo, *syscall.Stat_t) {
		st := &syscall.Stat_t{Ino: 7, Dev: 3, Ctim: syscall.NsecToTimespec(old.UnixNano() + 500)}
		return fakeInfo{size: 100, mtime: old, sys: st}, st
	}
	fi, _ := base()
	want := identOf(fi, at)
	if want == 0 {
		t.Fatal("an old file has no identity")
	}
	if again, _ := base(); identOf(again, at) != want {
		t.Error("the same Stat gave another identity")
	}
	differ := map[string]func(fi *fakeInfo, st *syscall.Stat_t){
		"size":              func(fi *fakeInfo, _ *syscall.Stat_t) { fi.size++ },
		"modification time": func(fi *fakeInfo, _ *syscall.Stat_t) { fi.mtime = fi.mtime.Add(time.Nanosecond) },
		"change time":       func(_ *fakeInfo, st *syscall.Stat_t) { st.Ctim.Nsec++ },
		"inode":             func(_ *fakeInfo, st *syscall.Stat_t) { st.Ino++ },
		"device":            func(_ *fakeInfo, st *syscall.Stat_t) { st.Dev++ },
	}
	for name, change := range differ {
		fi, st := base()
		change(&fi, st)
		if got := identOf(fi, at); got == want || got == 0 {
			t.Errorf("another %s: identity %d, want one other than %d and 0", name, got, want)
		}
	}
	untrusted := map[string]func(fi *fakeInfo, st *syscall.Stat_t){
		"modified within the margin": func(fi *fakeInfo, _ *syscall.Stat_t) { fi.mtime = at.Add(-racyMargin + time.Millisecond) },
		"changed within the margin": func(_ *fakeInfo, st *syscall.Stat_t) {
			st.Ctim = syscall.NsecToTimespec(at.Add(-racyMargin).UnixNano())
		},
		"modified in the future": func(fi *fakeInfo, _ *syscall.Stat_t) { fi.mtime = at.Add(time.Hour) },
		"no Stat_t":              func(fi *fakeInfo, _ *syscall.Stat_t) { fi.sys = nil },
	}
	for name, change := range untrusted {
		fi, st := base()
		change(&fi, st)
		if got := identOf(fi, at); got != 0 {
			t.Errorf("%s: identity %d, want 0", name, got)
		}
	}
}
