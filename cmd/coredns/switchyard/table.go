package switchyard

import (
	"math"
	"strings"
	"time"
)

// table is everything queries read: an immutable snapshot of the clusters
// and their endpoints, replaced as a whole through an atomic pointer after
// each applied xDS response, so a query never sees a cluster without its
// endpoints or half of an update.
type table struct {
	entries map[string]*entry
	// interior holds every proper suffix of an entry name ("shop" for
	// "web.shop") and of the name server's (nsLabel): such names exist in
	// the DNS tree and answer NODATA, not NXDOMAIN (RFC 8020).
	interior   map[string]bool
	cdsVersion string
	edsVersion string
	serial     uint32
	built      time.Time
	counts     [numHealth]int // endpoints by health, over every entry
}

// entry is one answerable name: a cluster joined with its assignment,
// with its pickers and SRV weights precomputed, or a cluster answered with
// a CNAME (cluster.cname), which has neither.
type entry struct {
	cluster *clusterInfo
	assign  *assignment
	pickers [numFamilies]picker
	srv     []srvTarget
	counts  [][numHealth]int // by xDS priority
}

// srvTarget is one SRV record of an entry.
type srvTarget struct {
	ep       *endpoint
	priority uint16
	weight   uint16
}

// srvWeightScale is the sum of the SRV weights of one priority: enough
// resolution for a 1 % service weight split across many endpoints.
const srvWeightScale = 10000

func newEntry(c *clusterInfo, a *assignment) *entry {
	e := &entry{cluster: c, assign: a}
	for f := range numFamilies {
		e.pickers[f] = newPicker(a, f, c.localityWeighted)
	}
	e.counts = make([][numHealth]int, a.maxPriority+1)
	for i := range a.endpoints {
		ep := &a.endpoints[i]
		e.counts[ep.priority][ep.health]++
	}
	e.srv = srvTargets(a, c.localityWeighted)
	return e
}

// srvTargets lists every usable endpoint as an SRV target. An SRV client
// uses the lowest priority it can reach and splits by weight within it, so
// each xDS priority keeps its number and its endpoints get weights
// proportional to what Envoy sends them once that priority is chosen
// (effective locality weight × endpoint weight), summing to about
// srvWeightScale. Degraded endpoints, Envoy's last resort, come after every
// priority: their SRV priority is maxPriority+1+priority. A standby
// priority that gets no traffic now is listed too; SRV clients fail over by
// themselves.
func srvTargets(a *assignment, localityWeighted bool) []srvTarget {
	var out []srvTarget
	degradedBase := a.maxPriority + 1
	for _, deg := range []bool{false, true} {
		for p := uint32(0); p <= a.maxPriority; p++ {
			lv := buildLevel(a, familyAny, p, deg, localityWeighted)
			prio := p
			if deg {
				prio += degradedBase
			}
			lv.each(func(ep *endpoint, share float64) {
				w := uint32(math.Round(share * srvWeightScale))
				out = append(out, srvTarget{ep: ep, priority: clampU16(prio), weight: clampU16(max(w, 1))})
			})
		}
	}
	return out
}

func clampU16(v uint32) uint16 {
	if v > math.MaxUint16 {
		return math.MaxUint16
	}
	return uint16(v)
}

// buildTable joins clusters with their assignments. A cluster whose
// assignment has not arrived yet is warming and left out, as Envoy does:
// it answers NXDOMAIN until its endpoints are known, never an empty answer.
// Entries whose cluster and assignment are unchanged are taken over from
// prev, so an update costs in proportion to what it changed.
func buildTable(prev *table, clusters map[string]*clusterInfo, assignments map[string]*assignment, cdsVersion, edsVersion string, now time.Time) *table {
	t := &table{
		entries:    make(map[string]*entry, len(clusters)),
		interior:   map[string]bool{},
		cdsVersion: cdsVersion,
		edsVersion: edsVersion,
		built:      now,
		serial:     uint32(now.Unix()),
	}
	if prev != nil && t.serial <= prev.serial {
		t.serial = prev.serial + 1
	}
	t.addInterior(nsLabel)
	for name, c := range clusters {
		if c.cname != "" {
			// A CNAME needs no endpoints: never warming.
			t.entries[name] = &entry{cluster: c}
			t.addInterior(name)
			continue
		}
		a := assignments[c.serviceName]
		if a == nil {
			continue
		}
		var e *entry
		if prev != nil {
			if old := prev.entries[name]; old != nil && old.cluster == c && old.assign == a {
				e = old
			}
		}
		if e == nil {
			e = newEntry(c, a)
		}
		t.entries[name] = e
		for _, byHealth := range e.counts {
			for h, n := range byHealth {
				t.counts[h] += n
			}
		}
		t.addInterior(name)
	}
	return t
}

// addInterior marks every proper suffix of name as interior.
func (t *table) addInterior(name string) {
	for rest := name; ; {
		dot := strings.IndexByte(rest, '.')
		if dot < 0 {
			return
		}
		rest = rest[dot+1:]
		t.interior[rest] = true
	}
}
