package console

import (
	"net/http"
	"strings"
)

// hostSummary is one row of the hosts list.
type hostSummary struct {
	Name   string `json:"name"`
	Proxy  string `json:"proxy,omitempty"`
	Routes int    `json:"routes"`
	Broken int    `json:"broken"`
}

type hostList struct {
	Total  int           `json:"total"`
	Offset int           `json:"offset"`
	Limit  int           `json:"limit"`
	Items  []hostSummary `json:"items"`
}

// serveHosts answers /api/hosts?q=&broken=true&offset=&limit=: the
// virtual hosts served, by name; q matches a substring of the name and
// broken=true keeps the hosts with a route that cannot carry traffic.
func (c *console) serveHosts(w http.ResponseWriter, r *http.Request) {
	vs := c.viewsFor(w, r)
	if vs == nil {
		return
	}
	v := vs.current()
	q, onlyBroken := r.URL.Query().Get("q"), r.URL.Query().Get("broken") == "true"
	p := pageOf(r)
	out := hostList{Offset: p.Offset, Limit: p.Limit, Items: []hostSummary{}}
	var match []*host
	for _, h := range v.hosts {
		if strings.Contains(h.Name, q) && (!onlyBroken || h.Broken > 0) {
			match = append(match, h)
		}
	}
	out.Total = len(match)
	lo, hi := p.slice(len(match))
	for _, h := range match[lo:hi] {
		out.Items = append(out.Items, hostSummary{Name: h.Name, Proxy: h.Proxy, Routes: len(h.Routes), Broken: h.Broken})
	}
	writeJSON(w, out)
}

// serveHost answers /api/host?name=: one virtual host with its routes in
// the order Envoy matches them.
func (c *console) serveHost(w http.ResponseWriter, r *http.Request) {
	if _, h := c.hostOr404(w, r, r.URL.Query().Get("name")); h != nil {
		writeJSON(w, h)
	}
}

// hostOr404 returns the named virtual host of the request's gateway with
// the gateway's views, or answers 404 (400 for an unknown gateway) and a
// nil host.
func (c *console) hostOr404(w http.ResponseWriter, r *http.Request, name string) (*views, *host) {
	vs := c.viewsFor(w, r)
	if vs == nil {
		return nil, nil
	}
	h := vs.current().byHost[name]
	if h == nil {
		http.Error(w, "no virtual host named "+name+" is served", http.StatusNotFound)
	}
	return vs, h
}
