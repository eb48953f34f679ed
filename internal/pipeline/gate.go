package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// The gate. Bad input never takes down good input, and the control plane
// never pushes a resource a client would reject (site/architecture.md):
// both are enforced here, in one place between the engine and the stager,
// for every build path — the first build, incremental ones and the
// endpoint path all go through Pipeline.publish — and `switchyard render`
// passes its resources through the same Gate.
//
// A resource passes when xdscheck.Served finds nothing in it (its protos'
// ValidateAll, nested typed_configs included, and the endpoint rules
// clients apply) and every resource it refers to is served. One that
// fails is withheld: clients keep the last version that passed, or do not
// get it at all when none did. References decide the rest, so that what
// is served never names what is not:
//
//   - a resource that refers to one withheld without a previous version
//     (a new cluster whose load assignment is bad, a route using that
//     cluster) is withheld too, and keeps its own previous version;
//   - a resource the build deletes stays while a kept previous version
//     still refers to it;
//   - the HTTPS listener, one filter chain per secure host, is patched
//     instead: only the failing hosts' chains are held back
//     (gatehttps.go).
//
// So a withheld load assignment keeps the old endpoints; a new cluster
// with a bad load assignment is withheld with the route configurations
// that start using it, which keep sending traffic where they did. Only
// what changed is validated — the resources in the build's delta, and
// those the gate holds back, until they pass.
//
// A resource's inspection (xdscheck.Inspect: its problems and its
// references) is made once: by the engine as it encodes the resource, in
// its first build's parallel phases, from the message at hand
// (gateinspect.go), or, for a resource made otherwise, by the gate from
// its encoding, on every core. Either way it is the inspection of the bytes clients are sent,
// and the groups that share a resource share it for the build.

// Rejection is a resource the gate withholds, and why.
type Rejection struct {
	incremental.ResourceRef
	Err error
	// Resource is the version that failed validation, nil when the
	// resource is withheld for what it refers to.
	Resource *xdsres.Resource
	// Hosts are, for the HTTPS listener served without some of its filter
	// chains, the hosts whose chain was withheld and why.
	Hosts []HostProblem
}

// Gate keeps, per consumer group, the resources that passed. It is used
// by one goroutine, except that the groups of a build of everything pass
// at once (PassAll), each touching its own group's state only.
type Gate struct {
	served map[xdsres.Group]incremental.Targets
	// held are the resources whose served version is not the build's.
	held map[xdsres.Group]map[typeName]bool
	// rejected are, by group, the resources withheld now, with the
	// version that failed, so that it is not validated again.
	rejected map[xdsres.Group]map[incremental.ResourceRef]rejected
	// inspected holds what this build's resources were found to be: the
	// groups share most clusters and load assignments, and a resource
	// never changes, so one inspection serves them all. It lives from
	// Begin to End only: after a full build it holds an entry and the
	// references of every resource served. Groups passing at once only
	// read it, and add what they inspect when all have passed.
	inspected map[*xdsres.Resource]inspection
	// early are the inspections the engine made as it encoded its first
	// update (record), which the build's first Pass takes as inspected;
	// earlyMu guards it while the engine's phases record.
	earlyMu sync.Mutex
	early   map[*xdsres.Resource]inspection
}

type inspection struct {
	err  error
	refs []xdscheck.Ref
}

type typeName struct{ typ, name string }

type rejected struct {
	res *xdsres.Resource
	err error
	// hosts are the HTTPS listener's withheld chains (gatehttps.go).
	hosts []HostProblem
}

// NewGate returns a gate that has served nothing.
func NewGate() *Gate {
	return &Gate{
		served:   map[xdsres.Group]incremental.Targets{},
		held:     map[xdsres.Group]map[typeName]bool{},
		rejected: map[xdsres.Group]map[incremental.ResourceRef]rejected{},
	}
}

// inspections is what one pass knows of the build's inspections: the
// gate's, and those it makes. A pass on its own adds to the gate's
// directly (own is shared); passes at once read the gate's only and keep
// theirs apart until all are done.
type inspections struct {
	shared, own map[*xdsres.Resource]inspection
}

func (in inspections) get(r *xdsres.Resource) (inspection, bool) {
	if got, ok := in.own[r]; ok {
		return got, true
	}
	got, ok := in.shared[r]
	return got, ok
}

// takeEarly makes the inspections the engine recorded the build's, on its
// first pass, and returns them for a pass on its own.
func (gt *Gate) takeEarly(n int) inspections {
	if gt.inspected == nil {
		gt.inspected, gt.early = gt.early, nil
	}
	if gt.inspected == nil {
		gt.inspected = make(map[*xdsres.Resource]inspection, n)
	}
	return inspections{shared: gt.inspected, own: gt.inspected}
}

// group makes g's state, so that passes at once never add to the maps
// of groups.
func (gt *Gate) group(g xdsres.Group) {
	if gt.served[g] == nil {
		gt.served[g] = incremental.Targets{}
		gt.held[g] = map[typeName]bool{}
	}
	if gt.rejected[g] == nil {
		gt.rejected[g] = map[incremental.ResourceRef]rejected{}
	}
}

// Begin starts a build, whose groups share their inspections until End.
func (gt *Gate) Begin() { gt.inspected = nil }

// End ends a build: what it inspected is forgotten, so that the memory it
// takes is not kept between builds.
func (gt *Gate) End() { gt.inspected, gt.early = nil, nil }

// Pass gates one group's build: target is the build's resources and
// changes what changed in them, or all when everything is new. It returns
// the resources that may be served (sets the gate keeps up to date on
// later calls) and what changed in those, with fresh counting every
// resource that newly failed. With all, what changed is not listed (out
// is nil): everything served is to be sent, and listing it would be a
// change for every resource, 200,000 at 10,000 roots.
func (gt *Gate) Pass(g xdsres.Group, target incremental.Targets, changes map[string]map[string]incremental.Change, all bool) (served incremental.Targets, out map[string]map[string]incremental.Change, fresh []Rejection) {
	served, examine, prev, fresh := gt.pass(g, target, changes, all, nil)
	if all {
		return served, nil, fresh
	}
	srv := typeCursor{targets: served}
	for _, tn := range examine {
		now := srv.of(tn.typ).Get(tn.name)
		if now == prev[tn] {
			continue
		}
		if out == nil {
			out = map[string]map[string]incremental.Change{}
		}
		if out[tn.typ] == nil {
			out[tn.typ] = map[string]incremental.Change{}
		}
		out[tn.typ][tn.name] = incremental.Change{Old: prev[tn], New: now}
	}
	return served, out, fresh
}

// PassAll is Pass with all for the groups gs of a build of everything, at
// once: at 10,000 roots the envoy group's pass takes a quarter of a second
// and the others' as long again, which one after another were most of the
// time between the build and the first response. Each pass touches its
// own group's state only, reads the build's inspections as the passes
// before this build's left them, and keeps what it inspects apart until
// all have passed. then, when not nil, is called from a group's
// goroutine with what the group passed as soon as it has. PassAll
// returns, in the order of gs, what each group may serve and what newly
// failed in it.
func (gt *Gate) PassAll(gs []xdsres.Group, targets []incremental.Targets, then func(i int, served incremental.Targets)) ([]incremental.Targets, [][]Rejection) {
	gt.takeEarly(0)
	for _, g := range gs {
		gt.group(g)
	}
	served := make([]incremental.Targets, len(gs))
	fresh := make([][]Rejection, len(gs))
	own := make([]inspections, len(gs))
	var wg sync.WaitGroup
	for i, g := range gs {
		own[i] = inspections{shared: gt.inspected, own: map[*xdsres.Resource]inspection{}}
		wg.Go(func() {
			served[i], _, _, fresh[i] = gt.pass(g, targets[i], nil, true, &own[i])
			if then != nil {
				then(i, served[i])
			}
		})
	}
	wg.Wait()
	for _, in := range own {
		maps.Copy(gt.inspected, in.own)
	}
	return served, fresh
}

// pass is Pass without the list of what changed in what is served, which
// only staging reads: on a first build it is every resource of every
// group. It returns what it examined and what was served of it before.
//
// insp is the pass's view of the build's inspections when groups pass at
// once; nil for a pass on its own, which adds to the gate's.
func (gt *Gate) pass(g xdsres.Group, target incremental.Targets, changes map[string]map[string]incremental.Change, all bool, insp *inspections) (served incremental.Targets, examine []typeName, prev map[typeName]*xdsres.Resource, fresh []Rejection) {
	gt.group(g)
	served = gt.servedOf(g, target)
	examine = gt.toExamine(g, target, changes, all)
	if insp == nil {
		in := gt.takeEarly(len(examine))
		insp = &in
	}
	withheld := gt.rejected[g]
	hs := hashNames(examine)
	// prev holds only what was served: a first build serves nothing
	// yet, and every resource of it would be a nil entry.
	prev = make(map[typeName]*xdsres.Resource)
	before := make(map[incremental.ResourceRef]rejected)
	srv := typeCursor{targets: served}
	for i, tn := range examine {
		if p := srv.of(tn.typ).GetHashed(tn.name, hs[i]); p != nil {
			prev[tn] = p
		}
		ref := incremental.ResourceRef{Group: g, Type: tn.typ, Name: tn.name}
		if rj, ok := withheld[ref]; ok {
			before[ref] = rj
		}
	}
	gt.validate(g, examine, hs, target, served, insp)
	if served[httpsListener.typ].Get(httpsListener.name) != target[httpsListener.typ].Get(httpsListener.name) {
		gt.patchHTTPS(g, target, prev, served)
	}
	gt.resolve(g, examine, hs, target, prev, served, insp)
	for _, tn := range examine {
		ref := incremental.ResourceRef{Group: g, Type: tn.typ, Name: tn.name}
		if rj, ok := withheld[ref]; ok {
			if b, was := before[ref]; !was || b.res != rj.res {
				fresh = append(fresh, Rejection{ResourceRef: ref, Err: rj.err, Resource: rj.res, Hosts: rj.hosts})
			}
		}
	}

	held := gt.held[g]
	tgt := typeCursor{targets: target}
	for i, tn := range examine {
		if srv.of(tn.typ).GetHashed(tn.name, hs[i]) != tgt.of(tn.typ).GetHashed(tn.name, hs[i]) {
			held[tn] = true
		} else {
			delete(held, tn)
		}
	}
	return served, examine, prev, fresh
}

func (gt *Gate) servedOf(g xdsres.Group, target incremental.Targets) incremental.Targets {
	served := gt.served[g]
	for t, byName := range target {
		if served[t] == nil {
			// Sized for the first build, which serves nearly all of it.
			served[t] = xdsres.NewSet(byName.Len())
		}
	}
	return served
}

// toExamine lists, sorted, what changed and what the gate holds back.
func (gt *Gate) toExamine(g xdsres.Group, target incremental.Targets, changes map[string]map[string]incremental.Change, all bool) []typeName {
	var out []typeName
	if all {
		out = allSorted(target)
	}
	// Only what is added below can be out of order.
	sorted := true
	seen := map[typeName]bool{}
	add := func(t, name string) {
		if _, listed := target[t].Lookup(name); all && listed {
			return
		}
		if tn := (typeName{t, name}); !seen[tn] {
			seen[tn] = true
			out, sorted = append(out, tn), false
		}
	}
	if all {
		for t, byName := range gt.served[g] {
			for name := range byName.All() {
				add(t, name)
			}
		}
	}
	for t, byName := range changes {
		for name := range byName {
			add(t, name)
		}
	}
	for tn := range gt.held[g] {
		add(tn.typ, tn.name)
	}
	if !sorted {
		slices.SortFunc(out, func(a, b typeName) int {
			if c := strings.Compare(a.typ, b.typ); c != 0 {
				return c
			}
			return strings.Compare(a.name, b.name)
		})
	}
	return out
}

// allSorted lists everything target holds, by type and name. Everything
// the build has is listed without a set: on a first build that is every
// resource, 200,000 at 10,000 roots, and sorting the names of each type
// on their own spares comparing their type URLs, which share a long
// prefix, at every step.
func allSorted(target incremental.Targets) []typeName {
	n := 0
	for _, byName := range target {
		n += byName.Len()
	}
	out := make([]typeName, 0, n)
	for _, t := range slices.Sorted(maps.Keys(target)) {
		names := target[t].Names()
		slices.Sort(names)
		for _, name := range names {
			out = append(out, typeName{t, name})
		}
	}
	return out
}

// validate serves the build's version of each resource unless it fails
// validation; what it inspects joins the build's inspections (insp),
// references included, until End. The inspections, the one costly part,
// run on every core.
func (gt *Gate) validate(g xdsres.Group, examine []typeName, hs []uint64, target, served incremental.Targets, insp *inspections) {
	type job struct {
		i    int // in examine
		cand *xdsres.Resource
		inspection
	}
	withheld := gt.rejected[g]
	// What is inspected already is decided at once: each resource's
	// verdict touches its own entries only, so the order is free.
	var jobs []job
	tgt, srv := typeCursor{targets: target}, typeCursor{targets: served}
	for i, tn := range examine {
		ref := incremental.ResourceRef{Group: g, Type: tn.typ, Name: tn.name}
		cand := tgt.of(tn.typ).GetHashed(tn.name, hs[i])
		switch rj, failed := withheld[ref]; {
		case cand == nil:
			delete(withheld, ref)
			srv.of(tn.typ).DeleteHashed(tn.name, hs[i])
		case srv.of(tn.typ).GetHashed(tn.name, hs[i]) == cand:
			delete(withheld, ref)
		case failed && rj.res == cand:
		default:
			in, ok := insp.get(cand)
			if !ok {
				jobs = append(jobs, job{i: i, cand: cand})
				continue
			}
			gt.admit(ref, hs[i], cand, in, srv.of(tn.typ))
		}
	}
	inParallel(len(jobs), func(k int) {
		j := &jobs[k]
		tn := examine[j.i]
		j.inspection = inspect(j.cand, tn.typ, tn.name)
	})
	for _, j := range jobs {
		insp.own[j.cand] = j.inspection
		tn := examine[j.i]
		ref := incremental.ResourceRef{Group: g, Type: tn.typ, Name: tn.name}
		gt.admit(ref, hs[j.i], j.cand, j.inspection, srv.of(tn.typ))
	}
}

// admit serves cand as ref, unless its inspection found a problem,
// byName being served's set of ref's type and h the Hash of ref's name.
func (gt *Gate) admit(ref incremental.ResourceRef, h uint64, cand *xdsres.Resource, in inspection, byName *xdsres.Set) {
	if in.err != nil {
		gt.rejected[ref.Group][ref] = rejected{res: cand, err: in.err}
		return
	}
	delete(gt.rejected[ref.Group], ref)
	byName.PutHashed(ref.Name, h, cand)
}

// hashNames is the xdsres.Hash of each name examined, which the gate
// looks up in several sets, several times: on every core, since a first
// build examines 200,000 at 10,000 roots.
func hashNames(examine []typeName) []uint64 {
	hs := make([]uint64, len(examine))
	inParallel(len(examine), func(i int) { hs[i] = xdsres.Hash(examine[i].name) })
	return hs
}

// typeCursor is a Targets' set of one type, looked up again only when the
// type changes: the gate goes through resources sorted by type, and a
// type URL is long to hash.
type typeCursor struct {
	targets incremental.Targets
	typ     string
	byName  *xdsres.Set
}

func (c *typeCursor) of(typ string) *xdsres.Set {
	if c.byName == nil || typ != c.typ {
		c.typ, c.byName = typ, c.targets[typ]
	}
	return c.byName
}

// inParallel calls fn for every i in [0, n), spread over the cores when n
// is large enough to be worth it.
func inParallel(n int, fn func(i int)) {
	w := runtime.GOMAXPROCS(0)
	if n < 64 || w < 2 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			for i := k; i < n; i += w {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// resolve withholds, until nothing changes, what refers to a resource
// that is not served, and keeps what a previous version still refers to.
// Every step moves a resource back to its previous version, which
// resolved, so it ends.
func (gt *Gate) resolve(g xdsres.Group, examine []typeName, hs []uint64, target incremental.Targets, prev map[typeName]*xdsres.Resource, served incremental.Targets, insp *inspections) {
	// What this build inspected holds its references; a version served
	// from before, which it did not inspect, is decoded for them once.
	refs := map[*xdsres.Resource][]xdscheck.Ref{}
	refsOf := func(r *xdsres.Resource) []xdscheck.Ref {
		if in, ok := insp.get(r); ok && in.err == nil {
			return in.refs
		}
		out, ok := refs[r]
		if !ok {
			if m := r.Decoded(); m != nil {
				out = xdscheck.Refs(m)
			}
			refs[r] = out
		}
		return out
	}
	// A resource's references are mostly of one type: a cursor of their
	// own spares hashing a type URL for each.
	srv, refSrv := typeCursor{targets: served}, typeCursor{targets: served}
	for changed := true; changed; {
		changed = false
		for i, tn := range examine {
			r := srv.of(tn.typ).GetHashed(tn.name, hs[i])
			if r == nil {
				continue
			}
			for _, ref := range refsOf(r) {
				byName := refSrv.of(ref.Type)
				if byName == nil || byName.Get(ref.Name) != nil {
					continue
				}
				if p := prev[typeName{ref.Type, ref.Name}]; p != nil {
					byName.Put(ref.Name, p)
					changed = true
					continue
				}
				if tn == httpsListener {
					if ok, again := gt.patchHTTPS(g, target, prev, served); ok {
						changed = changed || again
						break
					}
				}
				if p := prev[tn]; p == r {
					continue // served before as it is: nothing to go back to
				} else if p != nil {
					srv.of(tn.typ).PutHashed(tn.name, hs[i], p)
				} else {
					srv.of(tn.typ).DeleteHashed(tn.name, hs[i])
				}
				key := incremental.ResourceRef{Group: g, Type: tn.typ, Name: tn.name}
				if _, failed := gt.rejected[g][key]; !failed {
					gt.rejected[g][key] = rejected{err: fmt.Errorf("refers to %s %q, which is withheld", kindName(ref.Type), ref.Name)}
				}
				changed = true
				break
			}
		}
	}
}

// Rejected lists the resources withheld now, sorted by group, type and
// name.
func (gt *Gate) Rejected() []Rejection {
	var out []Rejection
	for _, byRef := range gt.rejected {
		for ref, rj := range byRef {
			out = append(out, Rejection{ResourceRef: ref, Err: rj.err, Resource: rj.res, Hosts: rj.hosts})
		}
	}
	slices.SortFunc(out, func(a, b Rejection) int { return a.Compare(b.ResourceRef) })
	return out
}

// Check is what a resource must pass to be served: it decodes, and
// xdscheck.Served finds nothing. The error lists every problem.
func Check(r *xdsres.Resource) error {
	m := r.Decoded()
	if m == nil {
		return fmt.Errorf("%s %q does not decode", kindName(r.Any.GetTypeUrl()), r.Name)
	}
	return joinProblems(xdscheck.Served(m))
}

// joinProblems makes one line of errors: it ends up in a status condition.
func joinProblems(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// kindName is the message name of a type URL: ClusterLoadAssignment.
func kindName(typeURL string) string {
	return typeURL[strings.LastIndexByte(typeURL, '.')+1:]
}
