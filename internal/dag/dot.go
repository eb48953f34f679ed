package dag

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// WriteDot writes the DAG as a Graphviz digraph: virtual hosts, their
// routes, the clusters the routes use and the Services behind them. It is
// what /debug/dag serves; pipe it to `dot -Tsvg` to look at it.
func WriteDot(w io.Writer, d *DAG) error {
	g := &dotWriter{nodes: map[string]string{}}
	if d != nil {
		for _, vh := range d.VirtualHosts {
			g.host("http", vh, nil)
		}
		for _, svh := range d.SecureVirtualHosts {
			g.host("https", &svh.VirtualHost, svh.TCPProxy)
		}
		for _, n := range d.DNSNames {
			id := g.node("dns/"+n.Name, "DNS "+n.Name, "note")
			g.edge(id, g.cluster(n.Cluster))
		}
	}
	return g.write(w)
}

type dotWriter struct {
	nodes map[string]string
	lines []string
	edges []string
}

func (g *dotWriter) node(key, label, shape string) string {
	if id, ok := g.nodes[key]; ok {
		return id
	}
	id := fmt.Sprintf("n%d", len(g.nodes))
	g.nodes[key] = id
	g.lines = append(g.lines, fmt.Sprintf("  %s [label=%q shape=%s];", id, label, shape))
	return id
}

func (g *dotWriter) edge(from, to string) {
	g.edges = append(g.edges, fmt.Sprintf("  %s -> %s;", from, to))
}

func (g *dotWriter) host(listener string, vh *VirtualHost, tcp *TCPProxy) {
	label := listener + "://" + vh.FQDN
	hid := g.node(label, label+"\n"+vh.Proxy.String(), "box")
	if tcp != nil {
		g.edge(hid, g.cluster(tcp.Cluster))
	}
	for _, r := range vh.Routes {
		rid := g.node(fmt.Sprintf("%s/route/%s/%d/%s", label, r.Proxy, r.Index, matchSignature(r)), routeLabel(r), "ellipse")
		g.edge(hid, rid)
		if r.Forward == nil {
			continue
		}
		if r.Forward.Cluster != nil {
			g.edge(rid, g.cluster(r.Forward.Cluster))
		}
		for _, w := range r.Forward.Weighted {
			g.edge(rid, g.cluster(w.Cluster))
		}
		for _, m := range r.Forward.Mirrors {
			g.edge(rid, g.cluster(m.Cluster))
		}
	}
}

func routeLabel(r *Route) string {
	kinds := map[PathMatchKind]string{PathPrefix: "prefix", PathExact: "exact", PathRegex: "regex"}
	label := fmt.Sprintf("%s %s", kinds[r.PathMatch.Kind], r.PathMatch.Value)
	for _, h := range r.HeaderMatches {
		label += "\nheader " + h.Name
	}
	switch {
	case r.HTTPSRedirect:
		label += "\n→ https"
	case r.Redirect != nil:
		label += "\n→ redirect"
	case r.DirectResponse != nil:
		label += fmt.Sprintf("\n→ %d", r.DirectResponse.StatusCode)
	}
	return label
}

func (g *dotWriter) cluster(c *Cluster) string {
	id := g.node("cluster/"+c.Name, "cluster "+c.Name, "component")
	for _, b := range c.Spec.Backends {
		sid := g.node("service/"+b.Service.String(), fmt.Sprintf("Service %s", b.Service), "cylinder")
		g.edges = append(g.edges, fmt.Sprintf("  %s -> %s [label=\"%d w%d p%d\"];", id, sid, b.Port, b.Weight, b.Priority))
	}
	return id
}

func (g *dotWriter) write(w io.Writer) error {
	edges := append([]string(nil), g.edges...)
	sort.Strings(edges)
	edges = slices.Compact(edges)
	_, err := fmt.Fprintf(w, "digraph switchyard {\n  rankdir=LR;\n%s\n%s\n}\n", strings.Join(g.lines, "\n"), strings.Join(edges, "\n"))
	return err
}
