package pipeline

import (
	"time"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Warm-up. A source whose first view takes long to read (the Kubernetes
// informers' lists) has it built in parts as they arrive, before anything
// is served, so that only the last part is left when the view is complete
// (server.WarmSource). Between BeginWarmup and EndWarmup no client has
// seen anything, which changes two things:
//
//   - staging (staging.go) is skipped: make-before-break protects clients
//     routing through what they have, and there are none, so every part
//     goes to the cache as built;
//   - the gate's "clients keep the last version that passed" has no
//     client behind it: a resource valid in one part and invalid in a
//     later one must not be served in its version from the middle of the
//     list. EndWarmup gates the final build again from nothing when the
//     gate holds anything back, so what is served is what the gate makes
//     of one build of the whole view.
//
// The engine itself needs nothing: incremental updates end in the state a
// full build of the same objects gives (incremental.TestIncrementalEqualsFullBuild).

// BeginWarmup starts a warm-up: the batches applied until EndWarmup are
// parts of a first view that nothing has been served from yet.
func (p *Pipeline) BeginWarmup() {
	p.warming = true
	for _, gw := range p.gateways {
		gw.BeginWarmup()
	}
}

// EndWarmup ends a warm-up: the cache holds what one build of every batch
// applied since BeginWarmup gives, and later batches are staged as usual.
func (p *Pipeline) EndWarmup() error {
	if !p.warming {
		return nil
	}
	p.warming = false
	if p.built && p.gate.holdsBack() {
		if err := p.regate(); err != nil {
			return err
		}
	}
	for g, s := range p.stagers {
		s.settle(p.gate.served[g])
	}
	for _, gw := range p.gateways {
		if err := gw.EndWarmup(); err != nil {
			return err
		}
	}
	return nil
}

// FullStatusUpdate is the status update of every object, as the first
// build reports it: statuses written after a warm-up must replace
// whatever their consumers hold, as the first build's do.
func (p *Pipeline) FullStatusUpdate() dag.StatusUpdate {
	return dag.StatusUpdate{All: true, Changed: p.Statuses()}
}

// Next is when Tick is next due, zero when nothing is pending.
func (p *Pipeline) Next() time.Time { return p.next() }

// regate passes the engine's current build through a new gate, and puts
// what it lets through in the cache in place of what the old one did.
func (p *Pipeline) regate() error {
	old := p.gate
	p.gate = NewGate()
	p.gate.Begin()
	defer p.gate.End()
	for _, g := range groups {
		served, _, fresh := p.gate.Pass(g.name, p.engine.Targets(g.name), nil, true)
		p.withheld(fresh)
		if p.cache == nil {
			continue
		}
		if err := p.cache.Update(g.name, targetsDiff(old.served[g.name], served)); err != nil {
			return err
		}
	}
	rejected := p.gate.Rejected()
	p.countWithheld(rejected)
	p.conds = RejectionConditions(rejected, p.engine.Owners)
	return nil
}

// holdsBack reports whether any resource is served in a version that is
// not its build's, or not at all.
func (gt *Gate) holdsBack() bool {
	for _, held := range gt.held {
		if len(held) > 0 {
			return true
		}
	}
	for _, byRef := range gt.rejected {
		if len(byRef) > 0 {
			return true
		}
	}
	return false
}

// unstaged is what a group's cache is given for a build when no client
// has seen anything: the gate's changes as they are (everything when all
// is new).
func unstaged(served incremental.Targets, changes map[string]map[string]incremental.Change, all bool) []xdsres.Change {
	var out []xdsres.Change
	if all {
		for t, byName := range served {
			for name, r := range byName.All() {
				out = append(out, xdsres.Change{TypeURL: t, Name: name, Resource: r})
			}
		}
		return out
	}
	for t, byName := range changes {
		for name, c := range byName {
			out = append(out, xdsres.Change{TypeURL: t, Name: name, Resource: c.New})
		}
	}
	return out
}

// targetsDiff lists the changes that turn from into to.
func targetsDiff(from, to incremental.Targets) []xdsres.Change {
	var out []xdsres.Change
	for t, byName := range to {
		for name, r := range byName.All() {
			if from[t].Get(name) != r {
				out = append(out, xdsres.Change{TypeURL: t, Name: name, Resource: r})
			}
		}
	}
	for t, byName := range from {
		for name := range byName.All() {
			if _, ok := to[t].Lookup(name); !ok {
				out = append(out, xdsres.Change{TypeURL: t, Name: name})
			}
		}
	}
	return out
}

// settle makes the stager's state what staging a first build of target
// all at once leaves (stage with all): every route configuration is
// current, nothing is pending or lingering. The cache already holds
// target.
func (s *stager) settle(target incremental.Targets) {
	s.target = target
	clear(s.pending)
	clear(s.lingering)
	clear(s.current)
	if s.staged {
		for name, r := range target[typeRoute].All() {
			s.current[name] = r
		}
	}
	s.started = true
}
