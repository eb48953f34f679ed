package console

import (
	"net/http"
	"slices"
	"strconv"
)

// graph is one host's path from its HTTPProxy to the Services behind it,
// as nodes and edges for the browser to lay out.
type graph struct {
	Nodes []graphNode `json:"nodes"`
	Edges []graphEdge `json:"edges"`
}

// graphNode is a proxy, host, route, cluster or service. A broken node
// cannot carry traffic; Problem says why.
type graphNode struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Label   string `json:"label"`
	Broken  bool   `json:"broken,omitempty"`
	Problem string `json:"problem,omitempty"`
}

type graphEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label,omitempty"`
}

// serveGraph answers /api/graph?host=.
func (c *console) serveGraph(w http.ResponseWriter, r *http.Request) {
	if vs, h := c.hostOr404(w, r, r.URL.Query().Get("host")); h != nil {
		writeJSON(w, graphOf(vs, h))
	}
}

func graphOf(vs *views, h *host) *graph {
	g := &graph{Nodes: []graphNode{}, Edges: []graphEdge{}}
	seen := map[string]bool{}
	add := func(n graphNode) {
		if !seen[n.ID] {
			seen[n.ID] = true
			g.Nodes = append(g.Nodes, n)
		}
	}
	hostID := "host:" + h.Name
	add(graphNode{ID: hostID, Kind: "host", Label: h.Name})
	if h.Proxy != "" {
		add(graphNode{ID: "proxy:" + h.Proxy, Kind: "proxy", Label: "HTTPProxy " + h.Proxy})
		g.Edges = append(g.Edges, graphEdge{From: "proxy:" + h.Proxy, To: hostID})
	}
	for i, rt := range h.Routes {
		id := "route:" + rt.Proxy + ":" + rt.Name + ":" + itoa(i)
		label := rt.Name + "\n" + rt.Match
		if rt.Broken {
			label += "\n" + rt.Problem
		}
		add(graphNode{ID: id, Kind: "route", Label: label, Broken: rt.Broken, Problem: rt.Problem})
		g.Edges = append(g.Edges, graphEdge{From: hostID, To: id, Label: itoa(i + 1)})
		for _, cl := range rt.Clusters {
			addCluster(vs, g, add, seen, id, cl)
		}
	}
	return g
}

// addCluster adds a cluster reached from a route, and the Services its
// load assignment holds.
func addCluster(vs *views, g *graph, add func(graphNode), seen map[string]bool, from string, cl weighted) {
	id := "cluster:" + cl.Name
	label := ""
	if cl.Weight > 0 {
		label = itoa(int(cl.Weight))
	}
	g.Edges = append(g.Edges, graphEdge{From: from, To: id, Label: label})
	if seen[id] {
		return
	}
	res := vs.assignment(cl.Name)
	if res == nil {
		add(graphNode{ID: id, Kind: "cluster", Label: cl.Name, Broken: true, Problem: "no endpoints are served for this cluster"})
		return
	}
	d := describeCluster(res)
	n := graphNode{ID: id, Kind: "cluster", Label: cl.Name}
	if d.Healthy == 0 {
		n.Broken, n.Problem = true, "no healthy endpoints"
		n.Label += "\nno healthy endpoints"
	}
	add(n)
	weights, healthy := map[string]uint32{}, map[string]int{}
	var services []string
	for _, l := range d.Localities {
		if _, ok := weights[l.Service]; !ok {
			services = append(services, l.Service)
		}
		weights[l.Service] += l.Weight
		for _, e := range l.Endpoints {
			if e.Health == "HEALTHY" || e.Health == "UNKNOWN" {
				healthy[l.Service]++
			}
		}
	}
	slices.Sort(services)
	for _, s := range services {
		sid := "service:" + s
		sn := graphNode{ID: sid, Kind: "service", Label: "Service " + s + "\n" + itoa(healthy[s]) + " healthy"}
		if healthy[s] == 0 {
			sn.Broken, sn.Problem = true, "no healthy endpoints"
		}
		add(sn)
		g.Edges = append(g.Edges, graphEdge{From: id, To: sid, Label: "weight " + itoa(int(weights[s]))})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
