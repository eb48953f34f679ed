package server

import (
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestHoldPending: an object newly waiting for ACKs keeps its published
// condition for pendingGrace, then says Pending; an object with nothing
// published says Pending at once.
func TestHoldPending(t *testing.T) {
	s := &Server{}
	old := objects.Key{Kind: objects.KindHTTPProxy, Namespace: "ns", Name: "old"}
	fresh := objects.Key{Kind: objects.KindHTTPProxy, Namespace: "ns", Name: "new"}
	programmed := xdsres.Programmed{Status: "True", Reason: xdsres.ReasonProgrammed}
	pending := xdsres.Programmed{Status: "Unknown", Reason: xdsres.ReasonPending}
	publish := func(at time.Time, verdicts ...xdsres.Programmed) (map[objects.Key]xdsres.Programmed, time.Time) {
		t.Helper()
		keys := []objects.Key{old, fresh}[:len(verdicts)]
		out, next := s.holdPending(keys, verdicts, at)
		s.programmed.Store(&out)
		return out, next
	}
	t0 := time.Now()
	publish(t0, programmed)

	out, next := publish(t0.Add(time.Millisecond), pending, pending)
	if out[old] != programmed || out[fresh] != pending || !next.Equal(t0.Add(time.Millisecond+pendingGrace)) {
		t.Fatalf("newly pending: %v, next %v", out, next.Sub(t0))
	}
	if out, _ := publish(t0.Add(pendingGrace/2), pending, pending); out[old] != programmed {
		t.Fatalf("still within the grace: %v", out)
	}
	if out, next := publish(t0.Add(time.Millisecond+pendingGrace), pending, pending); out[old] != pending || !next.IsZero() {
		t.Fatalf("after the grace: %v, next %v", out, next)
	}
	// Acknowledged, then waiting again: a new grace.
	publish(t0.Add(2*pendingGrace), programmed, programmed)
	if out, _ := publish(t0.Add(2*pendingGrace+time.Millisecond), pending, programmed); out[old] != programmed {
		t.Fatalf("waiting again: %v", out)
	}
}
