package dirsource

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// entry is one definition of an object: what it decoded to and where.
type entry struct {
	decoded
	file string // path relative to the root
	seq  int    // position among the file's objects
}

// fileState is what one file last contributed. A file is decoded again only
// when the hash of its content changes, and a rescan reads it again only
// when its identity changes.
type fileState struct {
	read     bool // the content was read and sum is its hash
	sum      [sha256.Size]byte
	ident    uint64 // identOf the Stat before the read; 0 if not to be trusted
	entries  []*entry
	problems []Problem
}

// tree is the state of a directory of manifests: what every file defines,
// and which definition of each object wins. Both Load and Watcher drive it;
// it does no watching itself.
type tree struct {
	root    string
	maxSize int64
	compact compactor // applied to every object read

	files map[string]*fileState          // by path relative to root
	defs  map[objects.Key][]*entry       // definitions in path, then document, order
	dups  map[objects.Key]struct{}       // keys with more than one definition
	paths map[string]Problem             // problems with a directory or link, by relative path
	prior map[objects.Key]runtime.Object // winners before the changes not yet collected; nil if absent
	// reported is set once changes has been called. Until then the prior
	// winner of every key is nil, since the tree started empty, so none is
	// noted: the first read (Load's only one) touches 100,000 keys.
	reported bool

	// stamps, when not nil, sets creationTimestamp on the winners that
	// changes reports: a Watcher's history, which Load does not have.
	stamps *stamper

	// clock tells when a round of reads begins, against which a file's
	// times must be old enough for its identity to be trusted.
	clock func() time.Time
}

func newTree(root string, o options) *tree {
	return &tree{
		root:    root,
		maxSize: o.maxFileSize,
		compact: o.compact(),
		files:   map[string]*fileState{},
		defs:    map[objects.Key][]*entry{},
		dups:    map[objects.Key]struct{}{},
		paths:   map[string]Problem{},
		clock:   time.Now,
	}
}

// join returns the path of rel as the user sees it: joined to the root.
func (t *tree) join(rel string) string { return filepath.Join(t.root, rel) }

// sync makes the state of everything at or under rel match the disk: it
// reads files whose content changed, forgets files that are gone, and calls
// onDir (if not nil) for every directory before listing it, so that a
// watch is in place before the listing and nothing created in between is
// missed. It returns the directories it visited.
//
// A rescan reads only the files whose identity (identOf) changed since
// they were read, or could not be trusted; otherwise every file is read
// and its hash compared, as for the paths an event named.
func (t *tree) sync(rel string, onDir func(rel string), rescan bool) map[string]bool {
	w := walk{tree: t, onDir: onDir, files: map[string]bool{}, dirs: map[string]bool{}}
	for p := range t.paths {
		if under(p, rel) {
			delete(t.paths, p)
		}
	}
	w.visit(rel, rel == ".")
	for _, r := range t.readFiles(w.manifests, rescan) {
		if !r.gone {
			w.files[r.rel] = true
		}
	}
	for f := range t.files {
		if under(f, rel) && !w.files[f] {
			t.setFile(f, nil)
		}
	}
	return w.dirs
}

type walk struct {
	tree  *tree
	onDir func(rel string)
	files map[string]bool
	dirs  map[string]bool
	// manifests are the files found, read together once the walk is done.
	manifests []string
}

// visit reads the file or directory at rel. Hidden entries are skipped and
// links to directories are not followed (which also rules out cycles), but
// the root itself may be a link.
func (w *walk) visit(rel string, follow bool) {
	t := w.tree
	abs := t.join(rel)
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(abs)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.paths[rel] = Problem{File: abs, Severity: Error, Message: fmt.Sprintf("cannot read: %v", err)}
		}
		return
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if target, err := os.Stat(abs); err == nil && target.IsDir() {
			t.paths[rel] = Problem{File: abs, Severity: Warning,
				Message: "symbolic link to a directory is not followed; skipped"}
			return
		}
	case fi.IsDir():
		w.dir(rel, abs)
		return
	}
	if !isManifest(rel) {
		return
	}
	w.manifests = append(w.manifests, rel)
}

func (w *walk) dir(rel, abs string) {
	t := w.tree
	if w.onDir != nil {
		w.onDir(rel)
	}
	w.dirs[rel] = true
	ents, err := os.ReadDir(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		// ReadDir returns what it read before the error; go on with that.
		t.paths[rel] = Problem{File: abs, Severity: Error, Message: fmt.Sprintf("cannot list directory: %v", err)}
	}
	for _, e := range ents {
		if hidden(e.Name()) {
			continue
		}
		w.visit(filepath.Join(rel, e.Name()), false)
	}
}

// readResult is what reading one file found: a new state, or none when the
// file is unchanged (keep it, with ident) or gone.
type readResult struct {
	rel   string
	st    *fileState
	gone  bool
	ident uint64
}

// read reads and decodes one file without changing the tree, so that many
// files can be read at once; apply then records the result. at is a time
// taken before the file's Stat (see identOf); a rescan does not read a file
// whose last read succeeded and whose trusted identity is unchanged.
func (t *tree) read(rel string, at time.Time, rescan bool) readResult {
	abs := t.join(rel)
	fail := func(msg string) readResult {
		return readResult{rel: rel, st: &fileState{problems: []Problem{{File: abs, Severity: Error, Message: msg}}}}
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A dangling link, or removed since it was listed.
		if _, lerr := os.Lstat(abs); lerr == nil {
			return fail("symbolic link to a missing file")
		}
		return readResult{rel: rel, gone: true}
	case err != nil:
		return fail(fmt.Sprintf("cannot read: %v", err))
	case !fi.Mode().IsRegular():
		// Reading a FIFO or a device would block or never end.
		return fail(fmt.Sprintf("not a regular file (%s); skipped", fi.Mode().Type()))
	case fi.Size() > t.maxSize:
		return fail(tooLarge(fi.Size(), t.maxSize))
	}
	// A file whose read failed is read again: its problem may be gone.
	id := identOf(fi, at)
	if old := t.files[rel]; rescan && id != 0 && old != nil && old.read && old.ident == id {
		return readResult{rel: rel, ident: id}
	}
	data, err := readAtMost(abs, t.maxSize, fi.Size())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return readResult{rel: rel, gone: true}
	case err != nil:
		return fail(fmt.Sprintf("cannot read: %v", err))
	case int64(len(data)) > t.maxSize:
		return fail(tooLarge(int64(len(data)), t.maxSize))
	}
	sum := sha256.Sum256(data)
	if old := t.files[rel]; old != nil && old.read && old.sum == sum {
		return readResult{rel: rel, ident: id}
	}
	objs, problems := decodeFile(abs, data, t.compact)
	st := &fileState{read: true, sum: sum, ident: id, problems: problems}
	for i, o := range objs {
		st.entries = append(st.entries, &entry{decoded: o, file: rel, seq: i})
	}
	return readResult{rel: rel, st: st}
}

func (t *tree) apply(r readResult) {
	switch {
	case r.st != nil:
		t.setFile(r.rel, r.st)
	case !r.gone:
		// The same content, perhaps under a new identity (renamed over
		// with the same bytes) or one now old enough to be trusted.
		t.files[r.rel].ident = r.ident
	}
}

// readFiles reads files on every core and applies the results in the
// order given, so that the outcome is the same as reading them one by one.
func (t *tree) readFiles(rels []string, rescan bool) []readResult {
	out := make([]readResult, len(rels))
	at := t.clock()
	parallel(len(rels), func(i int) { out[i] = t.read(rels[i], at, rescan) })
	if len(t.defs) == 0 {
		// The first read of a tree: size the index once rather than
		// growing it through every power of two up to 100,000 keys.
		n := 0
		for _, r := range out {
			if r.st != nil {
				n += len(r.st.entries)
			}
		}
		t.defs = make(map[objects.Key][]*entry, n)
	}
	for _, r := range out {
		t.apply(r)
	}
	return out
}

// readAtMost reads a file, stopping one byte past max so that a file that
// grew after it was checked is still caught. size is what Stat said: the
// buffer is made that large (and one byte more, to see the end) rather
// than grown by doubling, which allocated three times the file.
func readAtMost(path string, limit, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	buf := make([]byte, 0, min(size, limit)+1)
	r := io.LimitReader(f, limit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // the file grew: make room
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return buf, err
		}
	}
}

func tooLarge(size, limit int64) string {
	return fmt.Sprintf("file is %d bytes, more than the limit of %d; skipped", size, limit)
}

// setFile replaces what a file defines (st == nil: the file is gone) and
// notes the winners of the keys it touches before they change.
func (t *tree) setFile(rel string, st *fileState) {
	if old := t.files[rel]; old != nil {
		for _, e := range old.entries {
			t.touch(e.key)
			defs := slices.DeleteFunc(t.defs[e.key], func(x *entry) bool { return x == e })
			t.putDefs(e.key, defs)
		}
	}
	if st == nil {
		delete(t.files, rel)
		return
	}
	t.files[rel] = st
	for _, e := range st.entries {
		t.touch(e.key)
		defs := append(slices.Clone(t.defs[e.key]), e)
		slices.SortStableFunc(defs, entryCmp)
		t.putDefs(e.key, defs)
	}
}

func (t *tree) putDefs(k objects.Key, defs []*entry) {
	switch len(defs) {
	case 0:
		delete(t.defs, k)
		delete(t.dups, k)
	case 1:
		t.defs[k] = defs
		delete(t.dups, k)
	default:
		t.defs[k] = defs
		t.dups[k] = struct{}{}
	}
}

func entryCmp(a, b *entry) int {
	return cmp.Or(pathCmp(a.file, b.file), cmp.Compare(a.seq, b.seq))
}

func (t *tree) touch(k objects.Key) {
	if !t.reported {
		return
	}
	if t.prior == nil {
		t.prior = map[objects.Key]runtime.Object{}
	}
	if _, ok := t.prior[k]; !ok {
		t.prior[k] = t.winner(k)
	}
}

func (t *tree) winner(k objects.Key) runtime.Object {
	if defs := t.defs[k]; len(defs) > 0 {
		return defs[0].obj
	}
	return nil
}

// changes returns, sorted by key, the objects whose winning definition
// changed since the last call. A definition that decodes to a semantically
// equal object (a whitespace or comment edit, a field moved) is no change.
func (t *tree) changes() []objects.Change {
	if !t.reported {
		t.reported = true
		return t.firstChanges()
	}
	keys := make([]objects.Key, 0, len(t.prior))
	for k := range t.prior {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, objects.Key.Compare)
	if t.stamps != nil {
		t.stamps.begin()
	}
	out := make([]objects.Change, 0, len(keys))
	for _, k := range keys {
		before, now := t.prior[k], t.winner(k)
		if t.stamps != nil && now != nil {
			t.stamps.set(k, now) // before comparing, so a re-read equals what was sent
		}
		switch {
		case now == nil && before != nil:
			if t.stamps != nil {
				t.stamps.forget(k)
			}
			out = append(out, objects.Change{Key: k})
		case now != nil && (before == nil || !equality.Semantic.DeepEqual(before, now)):
			out = append(out, objects.Change{Key: k, Object: now})
		}
	}
	t.prior = nil
	return out
}

// firstChanges is changes for a tree that has reported nothing yet: every
// key defined is new, with its winner. At 10,000 roots that is 144,000
// changes on the path to the first response, listed with their winners
// in one pass over the definitions and sorted on every core.
func (t *tree) firstChanges() []objects.Change {
	out := make([]objects.Change, 0, len(t.defs))
	for k, defs := range t.defs {
		out = append(out, objects.Change{Key: k, Object: defs[0].obj})
	}
	out = sortInParallel(out, func(a, b objects.Change) int { return a.Key.Compare(b.Key) })
	if t.stamps != nil {
		t.stamps.begin()
		for _, c := range out {
			t.stamps.set(c.Key, c.Object)
		}
	}
	return out
}

// problems returns every current problem, sorted: those of each file, of
// directories and links, and one for every definition that lost to an
// earlier one.
func (t *tree) problems() []Problem {
	var ps []Problem
	for _, st := range t.files {
		ps = append(ps, st.problems...)
	}
	for _, p := range t.paths {
		ps = append(ps, p)
	}
	for k := range t.dups {
		defs := t.defs[k]
		first := defs[0]
		for _, e := range defs[1:] {
			ps = append(ps, Problem{
				File: t.join(e.file), Line: e.line,
				Kind: k.Kind.String(), Namespace: k.Namespace, Name: k.Name,
				Severity: Error,
				Message: fmt.Sprintf("already defined at %s:%d, which comes first; this definition is ignored",
					t.join(first.file), first.line),
			})
		}
	}
	sortProblems(ps)
	return ps
}

// snapshot returns a new Snapshot of the winning definitions.
func (t *tree) snapshot() *objects.Snapshot {
	objs := make([]runtime.Object, 0, len(t.defs))
	for _, defs := range t.defs {
		objs = append(objs, defs[0].obj)
	}
	// Only supported types are decoded, so SnapshotOf cannot fail.
	s, _ := objects.SnapshotOf(objs)
	return s
}

// pathCmp orders paths the way a directory walk visits them: component by
// component, so "a/z.yaml" comes before "a.yaml" (the directory "a" sorts
// before the file "a.yaml") even though '/' sorts after '.' in a string.
func pathCmp(a, b string) int {
	const sep = string(filepath.Separator)
	for {
		ac, arest, amore := strings.Cut(a, sep)
		bc, brest, bmore := strings.Cut(b, sep)
		if c := strings.Compare(ac, bc); c != 0 {
			return c
		}
		switch {
		case !amore && !bmore:
			return 0
		case !amore:
			return -1
		case !bmore:
			return 1
		}
		a, b = arest, brest
	}
}

// under reports whether path p is rel or inside it.
func under(p, rel string) bool {
	return rel == "." || p == rel || strings.HasPrefix(p, rel+string(filepath.Separator))
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// isManifest reports whether a file name is one this package reads.
func isManifest(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}
