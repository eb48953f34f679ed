package explain

import (
	"fmt"
	"strings"
)

// Text prints the result for a terminal: the decision first, then each
// step that led to it.
func (r *Result) Text() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	q := r.Request
	sep := "://"
	if q.Scheme == "xds" {
		sep = ":///"
	}
	p("%s %s%s%s%s (group %s)", q.Method, q.Scheme, sep, q.Authority, q.Path, r.Group)
	d := r.Decision
	status := ""
	if d.Status != 0 {
		status = fmt.Sprintf(" %d", d.Status)
	}
	p("=> %s%s: %s", d.Kind, status, d.Reason)
	if d.Location != "" {
		p("   location: %s", d.Location)
	}
	if d.Conditional != "" {
		p("   provided: %s", d.Conditional)
	}
	if d.Owner != nil {
		p("   from: %s", d.Owner)
		for _, pr := range d.Owner.Problems {
			p("   status: %s", pr)
		}
	}
	if d.Fix != "" {
		p("   fix: %s", d.Fix)
	}
	p("")
	if l := r.Listener; l != nil {
		chain := ""
		if l.FilterChain != "" {
			chain = ", filter chain " + l.FilterChain
		}
		p("listener     %s%s (%s)", l.Name, chain, l.Why)
	}
	if rc := r.RouteConfig; rc != nil {
		p("routes       %s via %s (%s)", rc.Name, rc.Via, rc.Why)
	}
	if vh := r.VirtualHost; vh != nil {
		owner := ""
		if vh.Owner != nil {
			owner = ", " + vh.Owner.String()
		}
		p("virtual host %s%s (%s)", vh.Name, owner, vh.Why)
	}
	for _, rc := range r.Routes {
		mark := "no "
		if rc.Matched {
			mark = "YES"
		}
		owner := ""
		if rc.Owner != nil {
			owner = " [" + rc.Owner.String() + "]"
		}
		p("  route %-3d %s %s -> %s%s", rc.Index, mark, rc.Match, rc.Action, owner)
		p("            %s", rc.Why)
	}
	for _, pol := range r.Policies {
		level := ""
		if pol.Level != "" {
			level = " (per-" + pol.Level + " setting)"
		}
		p("policy       %s [%s] %s: %s%s", pol.Filter, pol.Kind, pol.Effect, pol.Detail, level)
	}
	for _, be := range r.Backends {
		p("cluster      %s: %.1f%% of the route's requests", be.Cluster, be.Weight)
		if be.Problem != "" {
			p("             %s", be.Problem)
		}
		for _, pr := range be.Priorities {
			panicNote := ""
			if pr.Panic {
				panicNote = ", PANIC: all endpoints used regardless of health"
			}
			p("  priority %d: load %d%%, %d/%d healthy%s", pr.Priority, pr.Load, pr.Healthy, pr.Total, panicNote)
			for _, l := range pr.Localities {
				p("    locality %s weight %d: %.1f%%", describeLocality(l), l.Weight, l.Share)
				for _, e := range l.Endpoints {
					p("      %-22s %-9s weight %-4d %.1f%%", e.Address, e.Health, e.Weight, e.Share)
				}
			}
		}
	}
	for _, n := range r.Notes {
		p("note: %s", n)
	}
	return b.String()
}
