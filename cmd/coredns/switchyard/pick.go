package switchyard

import (
	"math/rand/v2"
)

// picker selects endpoints of one address family of one cluster with
// Envoy's semantics. It is built once per update and read by every query;
// a pick draws at most three random numbers from math/rand/v2's per-thread
// generator and allocates nothing.
//
// Envoy's steps, and how they are computed here:
//
//  1. Priority load. A priority's health is min(100, OF×healthy/total) and
//     its degraded health min(100, OF×degraded/total), in integer percent,
//     where OF is the overprovisioning factor (140 = 1.4) and total leaves
//     out DRAINING endpoints (Envoy excludes them from every ratio, so
//     draining an endpoint never spills traffic to a standby priority).
//     The loads are handed out from priority 0 down, healthy first, then
//     degraded with what is left, normalized by the total availability, and
//     rounding remainders go to the first priority with availability.
//  2. Locality. Within the chosen priority a locality is picked by its
//     weight × min(1, OF × eligible/total) when the cluster is locality
//     weighted; otherwise all eligible endpoints of the priority form one
//     group, as in Envoy.
//  3. Endpoint. Within the locality, by endpoint weight (default 1).
//
// Unlike Envoy, there is no panic mode: an UNHEALTHY or DRAINING endpoint
// is never answered. Switchyard configures Envoy the same way
// (healthy_panic_threshold 0).
type picker struct {
	levels []pickLevel
	// reachable lists the endpoints with a non-zero chance of being picked,
	// in table order; it bounds and completes multi-record answers.
	reachable []*endpoint
}

// pickLevel is one priority's healthy or degraded endpoints with the share
// of traffic they receive.
type pickLevel struct {
	priority uint32
	degraded bool
	load     uint32 // percent of traffic
	cumLoad  uint32 // load of this and every earlier level
	groups   []pickGroup
	cumGroup []float64 // cumulative effective locality weights
}

// pickGroup is the eligible endpoints of one locality (or of the whole
// priority, without locality weighting).
type pickGroup struct {
	effective float64
	endpoints []*endpoint
	cum       []uint64 // cumulative endpoint weights
}

// newPicker builds the picker of one family from an assignment.
func newPicker(a *assignment, fam family, localityWeighted bool) picker {
	var p picker
	if a == nil || len(a.endpoints) == 0 {
		return p
	}
	n := int(a.maxPriority) + 1
	healthy := make([]uint64, n)
	degraded := make([]uint64, n)
	total := make([]uint64, n)
	for i := range a.endpoints {
		e := &a.endpoints[i]
		if !inFamily(e, fam) || e.health == healthDraining {
			continue
		}
		total[e.priority]++
		switch e.health {
		case healthHealthy, healthUnknown:
			healthy[e.priority]++
		case healthDegraded:
			degraded[e.priority]++
		}
	}
	of := uint64(a.overprovisioning)
	hAvail := make([]uint32, n)
	dAvail := make([]uint32, n)
	var sum uint32
	for i := range n {
		if total[i] == 0 {
			continue
		}
		hAvail[i] = uint32(min(100, of*healthy[i]/total[i]))
		dAvail[i] = uint32(min(100, of*degraded[i]/total[i]))
		sum += hAvail[i] + dAvail[i]
	}
	normalized := min(100, sum)
	if normalized == 0 {
		return p
	}
	hLoad, firstH, remaining := distributeLoad(hAvail, 100, normalized)
	dLoad, firstD, remaining := distributeLoad(dAvail, remaining, normalized)
	if remaining > 0 {
		if firstH >= 0 {
			hLoad[firstH] += remaining
		} else {
			dLoad[firstD] += remaining
		}
	}
	var cum uint32
	add := func(prio int, load uint32, deg bool) {
		if load == 0 {
			return
		}
		cum += load
		lv := buildLevel(a, fam, uint32(prio), deg, localityWeighted)
		lv.load, lv.cumLoad = load, cum
		p.levels = append(p.levels, lv)
	}
	for i := range n {
		add(i, hLoad[i], false)
	}
	for i := range n {
		add(i, dLoad[i], true)
	}
	seen := make([]bool, len(a.endpoints))
	for i := range p.levels {
		for j := range p.levels[i].groups {
			for _, e := range p.levels[i].groups[j].endpoints {
				seen[e.index] = true
			}
		}
	}
	for i := range a.endpoints {
		if seen[i] {
			p.reachable = append(p.reachable, &a.endpoints[i])
		}
	}
	return p
}

// distributeLoad is Envoy's: each priority, from the first, takes its
// normalized availability of what is left.
func distributeLoad(avail []uint32, total, normalized uint32) (load []uint32, first int, remaining uint32) {
	load = make([]uint32, len(avail))
	first = -1
	for i, a := range avail {
		if a > 0 && first < 0 {
			first = i
		}
		load[i] = min(total, a*100/normalized)
		total -= load[i]
	}
	return load, first, total
}

func inFamily(e *endpoint, fam family) bool {
	return fam == familyAny || e.family() == fam
}

// eligible reports whether an endpoint is in a level's health class.
func eligible(e *endpoint, degraded bool) bool {
	if degraded {
		return e.health == healthDegraded
	}
	return e.health == healthHealthy || e.health == healthUnknown
}

// buildLevel groups a priority's eligible endpoints by locality with
// Envoy's effective locality weights.
func buildLevel(a *assignment, fam family, prio uint32, deg, localityWeighted bool) pickLevel {
	lv := pickLevel{priority: prio, degraded: deg}
	if localityWeighted {
		for li, loc := range a.localities {
			if loc.priority != prio || loc.weight == 0 {
				continue
			}
			var elig []*endpoint
			var hosts uint64
			for i := range a.endpoints {
				e := &a.endpoints[i]
				if e.locality != li || !inFamily(e, fam) || e.health == healthDraining {
					continue
				}
				hosts++
				if eligible(e, deg) {
					elig = append(elig, e)
				}
			}
			if len(elig) == 0 {
				continue
			}
			avail := min(1, float64(a.overprovisioning)/100*float64(len(elig))/float64(hosts))
			lv.addGroup(float64(loc.weight)*avail, elig)
		}
	}
	if len(lv.groups) == 0 {
		// No locality weighting, or every eligible endpoint sits in a
		// locality of weight 0: Envoy then picks among all eligible
		// endpoints of the priority.
		var elig []*endpoint
		for i := range a.endpoints {
			e := &a.endpoints[i]
			if e.priority == prio && inFamily(e, fam) && eligible(e, deg) {
				elig = append(elig, e)
			}
		}
		lv.addGroup(1, elig)
	}
	return lv
}

func (lv *pickLevel) addGroup(effective float64, eps []*endpoint) {
	g := pickGroup{effective: effective, endpoints: eps, cum: make([]uint64, len(eps))}
	var c uint64
	for i, e := range eps {
		c += uint64(e.weight)
		g.cum[i] = c
	}
	prev := 0.0
	if n := len(lv.cumGroup); n > 0 {
		prev = lv.cumGroup[n-1]
	}
	lv.groups = append(lv.groups, g)
	lv.cumGroup = append(lv.cumGroup, prev+effective)
}

// pick returns one endpoint, or nil when the family has none usable.
func (p *picker) pick() *endpoint {
	if len(p.levels) == 0 {
		return nil
	}
	lv := &p.levels[0]
	if len(p.levels) > 1 {
		r := rand.Uint32N(100)
		for i := range p.levels {
			if r < p.levels[i].cumLoad {
				lv = &p.levels[i]
				break
			}
		}
	}
	g := &lv.groups[0]
	if n := len(lv.groups); n > 1 {
		x := rand.Float64() * lv.cumGroup[n-1]
		i := 0
		for i < n-1 && x >= lv.cumGroup[i] {
			i++
		}
		g = &lv.groups[i]
	}
	n := len(g.endpoints)
	if n == 1 {
		return g.endpoints[0]
	}
	r := rand.Uint64N(g.cum[n-1])
	lo, hi := 0, n-1
	for lo < hi {
		mid := (lo + hi) / 2
		if r < g.cum[mid] {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return g.endpoints[lo]
}

// pickN appends up to n distinct endpoints to dst. The first is an
// ordinary pick; the others are further picks without repeats, so the
// record most clients use first keeps Envoy's distribution exactly. When
// repeated picks keep hitting chosen endpoints (one dominant weight), the
// answer is completed from the reachable endpoints in table order.
func (p *picker) pickN(dst []*endpoint, n int) []*endpoint {
	n = min(n, len(p.reachable))
	start := len(dst)
	for tries := 0; len(dst)-start < n && tries < 4*n; tries++ {
		e := p.pick()
		if !contains(dst[start:], e) {
			dst = append(dst, e)
		}
	}
	for _, e := range p.reachable {
		if len(dst)-start >= n {
			break
		}
		if !contains(dst[start:], e) {
			dst = append(dst, e)
		}
	}
	return dst
}

func contains(s []*endpoint, e *endpoint) bool {
	for _, x := range s {
		if x == e {
			return true
		}
	}
	return false
}

// each calls fn for every endpoint of the level with the fraction of the
// level's traffic it receives: its locality's share of the level times its
// weight's share of the locality.
func (lv *pickLevel) each(fn func(e *endpoint, share float64)) {
	total := lv.cumGroup[len(lv.cumGroup)-1]
	for j := range lv.groups {
		g := &lv.groups[j]
		if len(g.endpoints) == 0 {
			continue
		}
		gw := float64(g.cum[len(g.cum)-1])
		prev := uint64(0)
		for k, e := range g.endpoints {
			fn(e, g.effective/total*float64(g.cum[k]-prev)/gw)
			prev = g.cum[k]
		}
	}
}
