package incremental

import (
	"slices"
	"sort"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// statusTable holds what each unit found about each object, and the
// statuses joined from it.
type statusTable struct {
	parts map[objects.Key][]part
	// lostFQDN is the DuplicateFQDN error of a root that lost its host name.
	lostFQDN map[objects.Key]switchyardv1.SubCondition
	// dnsTaken counts, per owner, the DNS names it lost (by name).
	dnsTaken map[objects.Key]map[string]int
	// delegations lists the TLSCertificateDelegations of each namespace.
	delegations map[string]map[string]bool
	current     map[objects.Key]*dag.Status
	// list is current sorted by key; it is replaced, never modified, so a
	// caller may keep the one it got.
	list    []*dag.Status
	touched map[objects.Key]bool
	// recomputed are the keys the last update recomputed, sorted.
	recomputed []objects.Key
	// unlisted are the keys recomputed since list was last patched: list
	// is patched when someone asks for it, not by every update, so that a
	// change to one object among many costs nothing in proportion to their
	// number on the way to the cache.
	unlisted map[objects.Key]bool
}

// part is one unit's status for an object.
type part struct {
	unit unit
	st   *dag.Status
}

func newStatusTable() statusTable {
	return statusTable{
		parts:       map[objects.Key][]part{},
		lostFQDN:    map[objects.Key]switchyardv1.SubCondition{},
		dnsTaken:    map[objects.Key]map[string]int{},
		delegations: map[string]map[string]bool{},
		current:     map[objects.Key]*dag.Status{},
		touched:     map[objects.Key]bool{},
	}
}

func (t *statusTable) addPart(k objects.Key, u unit, st *dag.Status) {
	t.parts[k] = append(t.parts[k], part{u, st})
	t.touched[k] = true
}

func (t *statusTable) removePart(k objects.Key, u unit) {
	ps := t.parts[k]
	if i := slices.IndexFunc(ps, func(p part) bool { return p.unit == u }); i >= 0 {
		ps = slices.Delete(ps, i, i+1)
	}
	if len(ps) == 0 {
		delete(t.parts, k)
	} else {
		t.parts[k] = ps
	}
	t.touched[k] = true
}

// warnDNS adds (n = 1) or removes (n = -1) one lost claim of owner on name.
func (t *statusTable) warnDNS(owner objects.Key, name string, n int) {
	m := t.dnsTaken[owner]
	if m == nil {
		m = map[string]int{}
		t.dnsTaken[owner] = m
	}
	if m[name] += n; m[name] <= 0 {
		delete(m, name)
	}
	if len(m) == 0 {
		delete(t.dnsTaken, owner)
	}
	t.touched[owner] = true
}

// touchObjectStatuses marks the statuses that depend on changed objects
// themselves rather than on units: proxies (which may become orphans or
// stop being served), ExtensionServices, and delegations, which are
// checked against the Secrets they name.
func (e *Engine) touchObjectStatuses() {
	t := &e.statuses
	for k := range e.u.changed {
		switch k.Kind {
		case objects.KindHTTPProxy, objects.KindExtensionService:
			t.touched[k] = true
		case objects.KindTLSCertificateDelegation:
			t.touched[k] = true
			names := t.delegations[k.Namespace]
			if e.snap.Delegations[k.NamespacedName()] != nil {
				if names == nil {
					names = map[string]bool{}
					t.delegations[k.Namespace] = names
				}
				names[k.Name] = true
			} else if names != nil {
				delete(names, k.Name)
			}
		case objects.KindSecret:
			for name := range t.delegations[k.Namespace] {
				t.touched[objects.Key{Kind: objects.KindTLSCertificateDelegation, Namespace: k.Namespace, Name: name}] = true
			}
		}
	}
}

// recompute joins the touched statuses again and updates the sorted list.
func (t *statusTable) recompute(e *Engine) {
	t.recomputed = nil
	if len(t.touched) == 0 {
		return
	}
	keys := make([]objects.Key, 0, len(t.touched))
	for k := range t.touched {
		keys = append(keys, k)
	}
	t.touched = map[objects.Key]bool{} // not clear: see settleDNS
	joined := make([]*dag.Status, len(keys))
	forEach(len(keys), func(_, i int) { joined[i] = t.join(e, keys[i]) })
	for i, k := range keys {
		if joined[i] != nil {
			t.current[k] = joined[i]
		} else {
			delete(t.current, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	if t.unlisted == nil {
		t.unlisted = map[objects.Key]bool{}
	}
	for _, k := range keys {
		t.unlisted[k] = true
	}
	t.recomputed = keys
}

// update reports the last update's recomputed statuses, and the keys
// that lost theirs.
func (t *statusTable) update() dag.StatusUpdate {
	var u dag.StatusUpdate
	for _, k := range t.recomputed {
		if st := t.current[k]; st != nil {
			u.Changed = append(u.Changed, st)
		} else {
			u.Removed = append(u.Removed, k)
		}
	}
	return u
}

// join computes one object's status as Assemble would, or nil when it has
// none.
func (t *statusTable) join(e *Engine, k objects.Key) *dag.Status {
	nn := k.NamespacedName()
	switch k.Kind {
	case objects.KindTLSCertificateDelegation:
		if d := e.snap.Delegations[nn]; d != nil {
			return dag.DelegationStatus(e.snap, nn, d)
		}
		return nil
	case objects.KindHTTPProxy:
		if len(t.parts[k]) == 0 {
			if p := e.snap.HTTPProxies[nn]; p != nil && dag.Served(p, e.cfg.DAG) {
				return dag.OrphanedStatus(k, p.Generation)
			}
			return nil
		}
	}
	ps := t.parts[k]
	if len(ps) == 0 {
		return nil
	}
	sts := make([]*dag.Status, len(ps))
	for i, p := range ps {
		sts[i] = p.st
	}
	var errs, warnings []switchyardv1.SubCondition
	if c, ok := t.lostFQDN[k]; ok {
		errs = append(errs, c)
	}
	for name, n := range t.dnsTaken[k] {
		for range n {
			warnings = append(warnings, dag.DNSNameTaken(name))
		}
	}
	return dag.JoinStatus(k, sts, errs, warnings)
}

// patch returns a new sorted list with the statuses of keys (sorted)
// replaced, added or removed; nil when there are none.
func (t *statusTable) patch(keys []objects.Key) []*dag.Status {
	out := patchSorted(t.list, keys, func(st *dag.Status) objects.Key { return st.Key }, objects.Key.Less,
		func(k objects.Key) (*dag.Status, bool) {
			st := t.current[k]
			return st, st != nil
		})
	return orNil(slices.Clip(out))
}

func (t *statusTable) sorted() []*dag.Status {
	if len(t.unlisted) > 0 {
		keys := make([]objects.Key, 0, len(t.unlisted))
		for k := range t.unlisted {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
		t.list = t.patch(keys)
		clear(t.unlisted)
	}
	return t.list
}
