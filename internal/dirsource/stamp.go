package dirsource

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// renameGrace is how long an object that disappeared keeps its stamp: a
// file renamed, moved to another directory or rewritten in place can be
// seen as a removal in one batch and the same object again in the next,
// and that must not make it a newcomer.
const renameGrace = 2 * time.Second

// stamper gives every object a Watcher hands out the time it was first
// seen as its creationTimestamp, the way an API server stamps an object
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
// Everything read by NewWatcher gets the same stamp, so that among the
// objects there at start namespace and name decide, as in `render`. Later
// batches get later stamps, whole seconds apart: a creationTimestamp is
// written with a precision of seconds, and two batches must still compare
// in the order they were seen after a round trip through JSON.
type stamper struct {
	now   func() time.Time
	last  time.Time
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

// stamp returns the changes of one batch with every upserted object
// replaced by a copy carrying its stamp. Objects in changes are not
// modified.
func (s *stamper) stamp(changes []objects.Change) []objects.Change {
	now := s.now()
	for k, g := range s.gone {
		if now.Sub(g.at) > renameGrace {
			delete(s.gone, k)
		}
	}
	s.fresh = false
	out := make([]objects.Change, len(changes))
	for i, c := range changes {
		if c.Object == nil {
			if st, ok := s.seen[c.Key]; ok {
				s.gone[c.Key] = tombstone{stamp: st, at: now}
				delete(s.seen, c.Key)
			}
			out[i] = c
			continue
		}
		st, ok := s.seen[c.Key]
		if !ok {
			st = s.revive(c.Key, now)
			s.seen[c.Key] = st
		}
		obj := c.Object.DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			out[i] = c // every kind read has metadata; keep it as it is
			continue
		}
		m.SetCreationTimestamp(st)
		out[i] = objects.Change{Key: c.Key, Object: obj}
	}
	return out
}

// revive returns the stamp of an object that disappeared moments ago, or
// the stamp of this batch for one that is new.
func (s *stamper) revive(k objects.Key, now time.Time) metav1.Time {
	if g, ok := s.gone[k]; ok {
		delete(s.gone, k)
		return g.stamp
	}
	if !s.fresh {
		next := now.Truncate(time.Second)
		if !s.last.IsZero() && !next.After(s.last) {
			next = s.last.Add(time.Second)
		}
		s.last, s.fresh = next, true
	}
	return metav1.NewTime(s.last)
}
