package server

import (
	"context"
	"strings"
	"time"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"

	"github.com/switchyard-dev/switchyard/internal/admin"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/pipeline"
)

// loop coalesces batches: a build starts Holdoff after the last change,
// but never later than MaxWait after the first pending one, so a steady
// stream of changes cannot starve builds.
func (s *Server) loop(ctx context.Context, batches <-chan []objects.Change) error {
	var (
		pending  = newPending()
		timer    = time.NewTimer(time.Hour)
		stage    = time.NewTimer(time.Hour)
		prog     = newEvalTimer()
		deadline time.Time
	)
	timer.Stop()
	stage.Stop()
	schedule := func(next time.Time) {
		if !next.IsZero() {
			stage.Reset(time.Until(next))
		}
	}
	// reprogram is called when the cache or what nodes acknowledged
	// changed.
	reprogram := func() { prog.by(time.Now().Add(s.programmedDelay())) }
	schedule(s.next)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.acks.Changed():
			reprogram()
		case <-prog.t.C:
			prog.due = false
			if held := s.evaluateProgrammed(); !held.IsZero() {
				prog.by(held)
			}
		case <-stage.C:
			next, err := s.pipe.Tick()
			if err != nil {
				s.cfg.Log.Error("publishing a stage failed", "error", err)
			}
			schedule(next)
			reprogram()
		case b := <-batches:
			now := time.Now()
			if pending.empty() {
				deadline = now.Add(s.cfg.MaxWait)
			}
			pending.add(b)
			fire := now.Add(s.cfg.Holdoff)
			if fire.After(deadline) {
				fire = deadline
			}
			timer.Reset(time.Until(fire))
		case <-timer.C:
			if err := s.build(pending.take()); err != nil {
				s.cfg.Log.Error("build failed; still serving the last good configuration", "error", err)
			}
			schedule(s.next)
			reprogram()
		}
	}
}

// pendingChanges keeps the last change per object, in arrival order of
// first change, so a burst of edits to one object builds once.
type pendingChanges struct {
	order []objects.Key
	last  map[objects.Key]objects.Change
}

func newPending() *pendingChanges {
	return &pendingChanges{last: map[objects.Key]objects.Change{}}
}

func (p *pendingChanges) empty() bool { return len(p.order) == 0 }

func (p *pendingChanges) add(b []objects.Change) {
	for _, c := range b {
		if _, seen := p.last[c.Key]; !seen {
			p.order = append(p.order, c.Key)
		}
		p.last[c.Key] = c
	}
}

func (p *pendingChanges) take() []objects.Change {
	out := make([]objects.Change, 0, len(p.order))
	for _, k := range p.order {
		out = append(out, p.last[k])
	}
	p.order = p.order[:0]
	clear(p.last)
	return out
}

// build applies one batch and publishes the result.
func (s *Server) build(changes []objects.Change) error {
	res, err := s.apply(changes)
	if err != nil {
		return err
	}
	s.report(res, len(changes))
	return nil
}

// apply builds one batch into the cache, ready to serve.
func (s *Server) apply(changes []objects.Change) (pipeline.Result, error) {
	res, err := s.pipe.Apply(changes)
	s.next = res.Next
	if err == nil {
		s.cfg.Log.Debug("built", "full", res.Full, "changes", len(changes), "assignments", res.Assignments, "duration", res.Duration)
	}
	return res, err
}

// report hands what a build changed in the statuses to the admin
// endpoint, the log and OnStatuses: the first build's clients need none of
// it, so Run serves them first.
func (s *Server) report(res pipeline.Result, changes int) {
	if u := res.StatusUpdate; !res.Full && len(u.Changed) == 0 && len(u.Removed) == 0 {
		// The endpoint path changes statuses only when the gate withholds
		// a load assignment, or lets it through again.
		return
	}
	// The cache already holds the new resources; what follows is for
	// people (the admin endpoint, logs, status write-back).
	s.state.Store(s.adminState())
	s.logStatusChanges(res.StatusUpdate, changes, res.Duration)
	if s.cfg.OnStatuses != nil {
		s.cfg.OnStatuses(res.StatusUpdate)
	}
}

// adminState is what the admin endpoint shows after a build, for every
// gateway served: each gateway's own DAG and statuses.
func (s *Server) adminState() *admin.State {
	st := &admin.State{DAG: s.pipe.DAG(), Statuses: s.pipe.OwnStatuses()}
	for _, name := range s.cache.Gateways() {
		if gw := s.pipe.Gateway(name); gw != nil {
			if st.Gateways == nil {
				st.Gateways = map[string]*admin.State{}
			}
			st.Gateways[name] = &admin.State{DAG: gw.DAG(), Statuses: gw.OwnStatuses()}
		}
	}
	return st
}

// logStatusChanges logs one summary line per full build, and a line of
// its own only for an object that has an error, or had one and is fixed:
// at 10,000 objects a line for each Valid one buries the mistakes and
// costs seconds before the first build is served (the Valid ones are at
// debug level). It works from the build's status update, so a batch costs
// in proportion to what it changed, not to the number of objects.
func (s *Server) logStatusChanges(u dag.StatusUpdate, changes int, took time.Duration) {
	if u.All {
		s.logged = map[objects.Key]string{}
	}
	for _, k := range u.Removed {
		delete(s.logged, k)
	}
	var changed, invalid int
	for _, st := range u.Changed {
		line := st.State + "\x00" + st.Description
		before, seen := s.logged[st.Key]
		if before == line {
			continue
		}
		changed++
		s.logged[st.Key] = line
		wasBad := seen && len(before) > 0 && !strings.HasPrefix(before, switchyardv1.StatusValid+"\x00")
		switch {
		case len(st.Errors) > 0:
			invalid++
			s.cfg.Log.Warn("status", "object", st.Key.String(), "status", st.State, "description", st.Description)
		case st.State != switchyardv1.StatusValid || wasBad:
			s.cfg.Log.Info("status", "object", st.Key.String(), "status", st.State, "description", st.Description)
		default:
			s.cfg.Log.Debug("status", "object", st.Key.String(), "status", st.State, "description", st.Description)
		}
	}
	s.cfg.Log.Info("full build", "changes", changes, "objects", len(s.logged),
		"statusChanged", changed, "withErrors", invalid, "duration", took)
}
