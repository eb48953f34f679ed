package server

import (
	"time"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// programmedHoldoff is how long the loop waits after an ACK, a NACK or a
// build before it works out the Programmed conditions again, so that a
// burst of ACKs (every node acknowledging one push) costs one evaluation.
const programmedHoldoff = 50 * time.Millisecond

// programmedDelay is when the next evaluation may run: after the holdoff,
// and never sooner than four times the last one took, so that evaluating
// (objects × resources × nodes) cannot take more than a fifth of the loop.
func (s *Server) programmedDelay() time.Duration {
	return max(programmedHoldoff, 4*s.programmedTook)
}

// evaluateProgrammed works out the Programmed condition of every HTTPProxy
// and ExtensionService from what the connected nodes acknowledged, and
// publishes it. It runs on the build loop, which owns the pipeline.
func (s *Server) evaluateProgrammed() {
	start := time.Now()
	var keys []objects.Key
	var served [][]xdscache.Served
	for _, st := range s.pipe.Statuses() {
		if k := st.Key.Kind; k != objects.KindHTTPProxy && k != objects.KindExtensionService {
			continue
		}
		produced := s.pipe.Produced(st.Key)
		refs := make([]xdscache.Ref, len(produced))
		for i, r := range produced {
			refs[i] = xdscache.Ref{Group: r.Group, Type: r.Type, Name: r.Name}
		}
		keys = append(keys, st.Key)
		served = append(served, s.cache.Served(refs))
	}
	verdicts := s.acks.Evaluate(served)
	out := make(map[objects.Key]xdscache.Programmed, len(keys))
	for i, k := range keys {
		out[k] = verdicts[i]
	}
	s.programmed.Store(&out)
	if s.cfg.OnProgrammed != nil {
		s.cfg.OnProgrammed(out)
	}
	s.programmedTook = time.Since(start)
}

// Programmed returns the last Programmed condition of every HTTPProxy and
// ExtensionService, nil before the first evaluation. The map must not be
// modified.
func (s *Server) Programmed() map[objects.Key]xdscache.Programmed {
	if p := s.programmed.Load(); p != nil {
		return *p
	}
	return nil
}
