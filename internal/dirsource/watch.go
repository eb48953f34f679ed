package dirsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Batch is what one round of file changes did to the objects.
type Batch struct {
	// Changes are the object-level differences, sorted by key: an upsert
	// for every object that appeared or changed, a delete (nil Object) for
	// every object that is gone.
	Changes []objects.Change
	// Problems is the full current set of problems after this batch, not
	// only the new ones, so a caller can replace what it reports.
	Problems []Problem
}

// maxDrain bounds how many already-queued events are folded into one batch,
// so a flood of events still yields batches now and then.
const maxDrain = 4096

// maxPaths is how many changed paths are synced one by one; beyond that
// (a git checkout, a deploy tool replacing everything) a rescan, which
// reads only files whose Stat changed, is cheaper.
const maxPaths = 256

// eventBuffer is the size of the channel between fsnotify's reader and Run.
const eventBuffer = 1024

// Watcher follows a directory of manifests for `serve`. It keeps what every
// file defines and the hash of its content, so that an event re-reads only
// that file and an unchanged file emits nothing, and what Stat said of the
// file (identOf), so that a full rescan (at the start of Run, after events
// were lost, when the root comes back) reads only files whose Stat changed
// or is too recent to be trusted.
//
// Bursts are not coalesced over time here; the caller holds batches off. A
// file written in place may be seen half-written, which shows up as a batch
// with a Problem (or with its objects deleted) followed by the batch for the
// complete file; writing a temporary file and renaming it over avoids that.
type Watcher struct {
	tree      *tree
	initial   Batch
	started   atomic.Bool
	pollEvery time.Duration // how often to look for a vanished root

	// Owned by Run.
	fsw      *fsnotify.Watcher
	watched  map[string]bool // directories with a watch, relative to the root
	emitted  []Problem       // the Problems of the last batch
	rootGone bool
}

// NewWatcher reads root once; Initial returns the result. The error is as
// for Load.
func NewWatcher(root string, opts ...Option) (*Watcher, error) {
	if err := checkRoot(root); err != nil {
		return nil, err
	}
	t := newTree(root, newOptions(opts))
	t.sync(".", nil, false)
	return newWatcher(t, time.Now), nil
}

// newWatcher follows t, which has been read, stamping objects with the
// times now returns.
func newWatcher(t *tree, now func() time.Time) *Watcher {
	t.stamps = newStamper(now)
	w := &Watcher{tree: t, pollEvery: time.Second}
	w.initial = Batch{Changes: t.changes(), Problems: t.problems()}
	w.emitted = w.initial.Problems
	return w
}

// Initial returns the load done by NewWatcher: an upsert for every object,
// and the problems found. Every object carries the time the Watcher first
// saw it as its creationTimestamp (see stamper): the same time for all of
// them here, later times for objects that appear later.
func (w *Watcher) Initial() Batch {
	return Batch{Changes: slices.Clone(w.initial.Changes), Problems: slices.Clone(w.initial.Problems)}
}

// Run watches the tree until ctx is done and calls emit, from Run's
// goroutine, with the changes since Initial and then since the previous
// batch. It never emits a batch that changes nothing; a batch may carry
// only a changed set of Problems. Run may be called once; it returns nil
// when ctx is done, and an error if watching cannot start or stops.
func (w *Watcher) Run(ctx context.Context, emit func(Batch)) error {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("dirsource: Watcher.Run called twice")
	}
	// A buffer lets fsnotify's reader pass on the events of one kernel read
	// while a batch is being parsed, so that drain finds them together and
	// the kernel's queue overflows less often.
	fsw, err := fsnotify.NewBufferedWatcher(eventBuffer)
	if err != nil {
		return fmt.Errorf("dirsource: cannot watch %s: %w (on Linux, raise fs.inotify.max_user_instances, or use render)",
			w.tree.root, err)
	}
	defer func() { _ = fsw.Close() }()
	w.fsw, w.watched = fsw, map[string]bool{}

	// Watches go in before each directory is listed, so this rescan also
	// catches whatever changed since NewWatcher read the tree.
	w.rescan()
	w.flush(emit)

	var (
		poll *time.Ticker
		tick <-chan time.Time
	)
	defer func() {
		if poll != nil {
			poll.Stop()
		}
	}()
	for {
		switch {
		case w.rootGone && poll == nil:
			poll = time.NewTicker(w.pollEvery)
			tick = poll.C
		case !w.rootGone && poll != nil:
			poll.Stop()
			poll, tick = nil, nil
		}
		var p pending
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return errWatcherClosed
			}
			w.add(&p, ev)
		case _, ok := <-fsw.Errors:
			if !ok {
				return errWatcherClosed
			}
			p.full = true // overflow or a failed read: events were lost
		case <-tick:
			p.full = true
		}
		w.drain(&p)
		w.apply(&p)
		w.flush(emit)
	}
}

// errWatcherClosed is returned if fsnotify stops on its own, which it does
// not do unless closed: without it, changes would silently stop arriving.
var errWatcherClosed = errors.New("dirsource: file watcher closed unexpectedly")

// pending is the work from a run of events: paths to look at again, or a
// full rescan when events may have been lost.
type pending struct {
	paths map[string]bool
	full  bool
}

// drain folds the events already queued into p, so that one editor save
// (several events) usually becomes one batch.
func (w *Watcher) drain(p *pending) {
	for range maxDrain {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.add(p, ev)
		case _, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			p.full = true
		default:
			return
		}
	}
}

// add notes the path an event is about. The op does not matter: whatever
// happened (a write, an editor's rename over the file, a removal), the path
// is looked at again and its state made to match the disk.
func (w *Watcher) add(p *pending, ev fsnotify.Event) {
	rel, err := filepath.Rel(w.tree.root, ev.Name)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return // not under the root: a stale watch of a directory moved away
	}
	if rel == "." {
		p.full = true // the root itself was removed or moved
		return
	}
	if hidden(filepath.Base(rel)) {
		// Editors' swap files and the like are ignored, but a hidden link
		// being replaced is how a Kubernetes ConfigMap volume swaps all its
		// files at once: look at the directory again.
		if fi, err := os.Lstat(ev.Name); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			rel = filepath.Dir(rel)
		} else {
			return
		}
	}
	if p.paths == nil {
		p.paths = map[string]bool{}
	}
	p.paths[rel] = true
}

// apply brings the state up to date with the paths in p. Paths that are
// gone are handled first, so that a directory renamed inside the tree loses
// its old watches before it is watched under its new name.
func (w *Watcher) apply(p *pending) {
	if p.full || w.rootGone || len(p.paths) > maxPaths {
		w.rescan()
		return
	}
	paths := make([]string, 0, len(p.paths))
	for rel := range p.paths {
		paths = append(paths, rel)
	}
	// In walk order a directory comes right before everything under it.
	slices.SortFunc(paths, pathCmp)
	var gone, present []string
	parent := ""
	for _, rel := range paths {
		if parent != "" && under(rel, parent) {
			continue // syncing the parent covers it
		}
		parent = rel
		if _, err := os.Lstat(w.tree.join(rel)); err != nil {
			gone = append(gone, rel)
		} else {
			present = append(present, rel)
		}
	}
	for _, rel := range append(gone, present...) {
		w.sync(rel, false) // an event says it changed: no Stat is trusted over that
	}
}

// rescan compares the whole tree with what was read, reading again only
// the files whose Stat says they may have changed. If the root itself is
// gone (moved away, or being replaced), the last objects are kept and a
// Problem says so; Run then polls until the root is back.
func (w *Watcher) rescan() {
	if err := checkRoot(w.tree.root); err != nil {
		w.rootGone = true
		w.tree.paths["."] = Problem{File: w.tree.root, Severity: Error,
			Message: fmt.Sprintf("%v; serving the objects last read until it is back", err)}
		return
	}
	if w.rootGone {
		// Watches of a tree that was moved away still report under the old
		// names; start over.
		for rel := range w.watched {
			_ = w.fsw.Remove(w.tree.join(rel))
		}
		clear(w.watched)
		w.rootGone = false
	}
	w.sync(".", true)
}

// sync re-reads rel and everything under it (as tree.sync does, for a
// rescan or not), watching every directory it visits and dropping the
// watches of directories that are gone.
func (w *Watcher) sync(rel string, rescan bool) {
	dirs := w.tree.sync(rel, w.watch, rescan)
	for d := range w.watched {
		if under(d, rel) && !dirs[d] {
			_ = w.fsw.Remove(w.tree.join(d)) // already gone with the directory, usually
			delete(w.watched, d)
		}
	}
}

func (w *Watcher) watch(rel string) {
	if w.watched[rel] {
		return
	}
	abs := w.tree.join(rel)
	if err := w.fsw.Add(abs); err != nil {
		w.tree.paths[rel] = Problem{File: abs, Severity: Error,
			Message: fmt.Sprintf("cannot watch for changes: %v; edits here are not seen (on Linux, raise fs.inotify.max_user_watches)", err)}
		return
	}
	w.watched[rel] = true
}

// flush emits what changed since the last batch, if anything did.
func (w *Watcher) flush(emit func(Batch)) {
	changes := w.tree.changes()
	problems := w.tree.problems()
	if len(changes) == 0 && slices.Equal(problems, w.emitted) {
		return
	}
	w.emitted = problems
	emit(Batch{Changes: changes, Problems: problems})
}
