package dirsource

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// renameGrace is how long an object that disappeared keeps its stamp: a
// file renamed, moved to another directory or rewritten in place can be
// seen as a removal in one batch and the same object again in the next,
// and that must not make it a newcomer.
const renameGrace = 2 * time.Second

// stamper sets the creationTimestamp of every object a Watcher hands out to
// the time the object was first seen, the way an API server stamps an object
// when it is created, so that the DAG's rule for competing claims on a host
// name (the oldest claim wins) means in a directory what it means in a
// cluster: a file added later can never take a host name from a proxy
// already serving it.
//
// A creationTimestamp written in the file is replaced, as the API server
// replaces one sent on create: a file could otherwise claim to be older
// than the proxy it wants to displace. The stamp is kept while the object
// exists, across edits and across moves of its definition between files,
// and forgotten renameGrace after the object is gone.
//
// The history is the Watcher's own: a new Watcher (serve restarted) stamps
// everything it reads with its start time again.
//
// Everything read by NewWatcher gets the same stamp, so that among the
// objects there at start namespace and name decide, as in `render` when
// the files set no creationTimestamp. Later
// batches get later stamps, whole seconds apart: a creationTimestamp is
// written with a precision of seconds, and two batches must still compare
// in the order they were seen after a round trip through JSON.
type stamper struct {
	now   func() time.Time
	at    time.Time // when the current batch began
	last  time.Time // the stamp of the latest batch that saw a new object
	seen  map[objects.Key]metav1.Time
	gone  map[objects.Key]tombstone
	fresh bool // last was handed out in the current batch
}

// tombstone is the stamp of an object that disappeared, and when.
type tombstone struct {
	stamp metav1.Time
	at    time.Time
}

func newStamper(now func() time.Time) *stamper {
	return &stamper{now: now, seen: map[objects.Key]metav1.Time{}, gone: map[objects.Key]tombstone{}}
}

// begin starts a batch: stamps handed out from here to the next begin are
// the same, and tombstones older than renameGrace are dropped.
func (s *stamper) begin() {
	s.at = s.now()
	for k, g := range s.gone {
		if s.at.Sub(g.at) > renameGrace {
			delete(s.gone, k)
		}
	}
	s.fresh = false
}

// set gives obj, the definition of k that the tree is about to compare
// and perhaps hand out, the stamp of k. It writes to obj only when the
// stamp differs, which is never the case for an object already handed out:
// that one got the stamp of k then, and the stamp of k does not change
// while k exists. So an object is modified only before anyone else sees
// it, and a stamped object compares equal to its unchanged re-read.
//
// A compact Service or EndpointSlice (objects.Service, objects.EndpointSlice)
// has no creationTimestamp to hold a stamp: it gets none, and costs no
// entry, which at 10,000 proxies is two thirds of the objects read.
func (s *stamper) set(k objects.Key, obj runtime.Object) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	st, ok := s.seen[k]
	if !ok {
		st = s.revive(k)
		s.seen[k] = st
	}
	if old := m.GetCreationTimestamp(); !old.Equal(&st) {
		m.SetCreationTimestamp(st)
	}
}

// forget notes that k is gone, keeping its stamp for renameGrace.
func (s *stamper) forget(k objects.Key) {
	if st, ok := s.seen[k]; ok {
		s.gone[k] = tombstone{stamp: st, at: s.at}
		delete(s.seen, k)
	}
}

// revive returns the stamp of an object that disappeared moments ago, or
// the stamp of this batch for one that is new.
func (s *stamper) revive(k objects.Key) metav1.Time {
	if g, ok := s.gone[k]; ok {
		delete(s.gone, k)
		return g.stamp
	}
	if !s.fresh {
		next := s.at.Truncate(time.Second)
		if !s.last.IsZero() && !next.After(s.last) {
			next = s.last.Add(time.Second)
		}
		s.last, s.fresh = next, true
	}
	return metav1.NewTime(s.last)
}
