package switchyard

import (
	"fmt"
	"strings"
	"time"
)

// maxTXTLines bounds a debug TXT record; a TXT string holds at most 255
// bytes and the whole answer must stay well within a TCP message.
const (
	maxTXTLines  = 64
	maxTXTString = 255
)

// debugTXT describes what the plugin knows about a cluster, one TXT string
// per line, for `dig TXT <name>`: versions, the current load of each
// priority per address family, endpoint counts by health per priority, and
// the localities.
func (e *entry) debugTXT(t *table) []string {
	a, c := e.assign, e.cluster
	lines := []string{
		fmt.Sprintf("cluster=%s service=%s cds_version=%s eds_version=%s", c.name, c.serviceName, c.version, a.version),
		fmt.Sprintf("locality_weighted=%t overprovisioning=%d table_cds_version=%s table_eds_version=%s", c.localityWeighted, a.overprovisioning, t.cdsVersion, t.edsVersion),
		"load_a=" + loads(&e.pickers[familyV4]),
		"load_aaaa=" + loads(&e.pickers[familyV6]),
	}
	for p, counts := range e.counts {
		var b strings.Builder
		fmt.Fprintf(&b, "priority=%d", p)
		for h, n := range counts {
			fmt.Fprintf(&b, " %s=%d", health(h), n)
		}
		lines = append(lines, b.String())
	}
	for i, l := range a.localities {
		n := 0
		for j := range a.endpoints {
			if a.endpoints[j].locality == i {
				n++
			}
		}
		lines = append(lines, fmt.Sprintf("priority=%d locality=%s weight=%d endpoints=%d", l.priority, l.String(), l.weight, n))
	}
	return clip(lines)
}

// loads writes a picker's levels: "p0=70% p1=30%", degraded levels as
// "p0/degraded=..", "none" when the family has no usable endpoint.
func loads(p *picker) string {
	if len(p.levels) == 0 {
		return "none"
	}
	parts := make([]string, len(p.levels))
	for i, lv := range p.levels {
		deg := ""
		if lv.degraded {
			deg = "/degraded"
		}
		parts[i] = fmt.Sprintf("p%d%s:%d%%", lv.priority, deg, lv.load)
	}
	return strings.Join(parts, ",")
}

func (s *Switchyard) apexTXT(t *table) []string {
	c := s.client
	return clip([]string{
		fmt.Sprintf("switchyard clusters=%d endpoints=%d cds_version=%s eds_version=%s", len(t.entries), sum(t.counts[:]), t.cdsVersion, t.edsVersion),
		fmt.Sprintf("connected=%t ready=%t updated=%s streams=%d", c.connected.Load(), c.ready.Load(), t.built.UTC().Format(time.RFC3339Nano), c.streams.Load()),
		fmt.Sprintf("acks=cds:%d,eds:%d nacks=cds:%d,eds:%d", c.stats[cds].acks.Load(), c.stats[eds].acks.Load(), c.stats[cds].nacks.Load(), c.stats[eds].nacks.Load()),
	})
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func clip(lines []string) []string {
	if len(lines) > maxTXTLines {
		lines = append(lines[:maxTXTLines-1], fmt.Sprintf("... %d more lines", len(lines)-maxTXTLines+1))
	}
	for i, l := range lines {
		lines[i] = truncate(l, maxTXTString)
	}
	return lines
}
