package server

import (
	"time"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// programmedHoldoff is how long the loop waits after an ACK, a NACK or a
// build before it works out the Programmed conditions again, so that a
// burst of ACKs (every node acknowledging one push) costs one evaluation.
const programmedHoldoff = 50 * time.Millisecond

// pendingGrace is how long an object's published condition stays as it
// was while nodes acknowledge a new version: most pushes are acknowledged
// within it, and saying Pending in between would cost every changed
// object two status writes per push. An object still waiting after it is
// published as Pending.
const pendingGrace = time.Second

// programmedDelay is when the next evaluation may run: after the holdoff,
// and never sooner than four times the last one took, so that evaluating
// (objects × resources × nodes) cannot take more than a fifth of the loop.
func (s *Server) programmedDelay() time.Duration {
	return max(programmedHoldoff, 4*s.programmedTook)
}

// evalTimer schedules the evaluations of the Programmed conditions: one
// at a time, and a new reason to evaluate only ever brings it forward,
// so that a steady stream of ACKs cannot postpone it.
type evalTimer struct {
	t   *time.Timer
	due bool
	at  time.Time
}

// newEvalTimer returns a timer due now: the first build's conditions.
func newEvalTimer() *evalTimer {
	return &evalTimer{t: time.NewTimer(0), due: true, at: time.Now()}
}

// by makes an evaluation due at at, unless one is due sooner.
func (e *evalTimer) by(at time.Time) {
	if e.due && !at.Before(e.at) {
		return
	}
	e.due, e.at = true, at
	e.t.Reset(time.Until(at))
}

// evaluateProgrammed works out the Programmed condition of every HTTPProxy
// and ExtensionService from what the connected nodes acknowledged, and
// publishes it. It runs on the build loop, which owns the pipeline. It
// returns when to evaluate again for a Pending condition held back (see
// pendingGrace), zero when none is.
func (s *Server) evaluateProgrammed() time.Time {
	start := time.Now()
	var keys []objects.Key
	var served [][]xdscache.Served
	for _, st := range s.pipe.Statuses() {
		if k := st.Key.Kind; k != objects.KindHTTPProxy && k != objects.KindExtensionService {
			continue
		}
		// A proxy of a further gateway is programmed by that gateway's
		// nodes, from that gateway's cache (site/gateways.md).
		pipe := s.pipe.ServedBy(st.Key)
		produced := pipe.Produced(st.Key)
		refs := make([]xdscache.Ref, 0, len(produced))
		for _, r := range produced {
			// What the gate withholds is served to nobody; the Valid
			// condition says why.
			if pipe.Served(r.Group)[r.Type].Get(r.Name) != nil {
				refs = append(refs, xdscache.Ref{Group: r.Group, Type: r.Type, Name: r.Name})
			}
		}
		keys = append(keys, st.Key)
		served = append(served, pipe.Cache().Served(refs))
	}
	out, next := s.holdPending(keys, s.acks.Evaluate(served), start)
	s.programmed.Store(&out)
	if s.cfg.OnProgrammed != nil {
		s.cfg.OnProgrammed(out)
	}
	s.programmedTook = time.Since(start)
	return next
}

// holdPending returns the conditions to publish: each verdict, except
// that one newly Pending keeps the last published condition for
// pendingGrace; next is when the first held one is due.
func (s *Server) holdPending(keys []objects.Key, verdicts []xdsres.Programmed, now time.Time) (map[objects.Key]xdsres.Programmed, time.Time) {
	prev := s.Programmed()
	out := make(map[objects.Key]xdsres.Programmed, len(keys))
	since := make(map[objects.Key]time.Time)
	var next time.Time
	for i, k := range keys {
		v := verdicts[i]
		out[k] = v
		if v.Reason != xdsres.ReasonPending {
			continue
		}
		t, ok := s.pendingSince[k]
		if !ok {
			t = now
		}
		since[k] = t
		old, had := prev[k]
		if due := t.Add(pendingGrace); had && now.Before(due) {
			out[k] = old
			if next.IsZero() || due.Before(next) {
				next = due
			}
		}
	}
	s.pendingSince = since
	return out, next
}

// Programmed returns the last Programmed condition of every HTTPProxy and
// ExtensionService, nil before the first evaluation. The map must not be
// modified.
func (s *Server) Programmed() map[objects.Key]xdsres.Programmed {
	if p := s.programmed.Load(); p != nil {
		return *p
	}
	return nil
}
