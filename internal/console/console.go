// Package console serves Switchyard's web console on the admin endpoint:
// the objects with their status, one host's routes in match order and
// its graph, one cluster's endpoints (live, over server-sent events), the
// connected clients and the explain form.
//
// The pages are plain HTML and JavaScript embedded in the binary; they
// read JSON from the handlers here, which page and filter on the server
// so that every page stays small at tens of thousands of proxies. The
// handlers read what the control plane already publishes (the statuses
// of the last build, the resources the cache serves), never the build
// loop's working state. The JSON shapes are documented in site/console.md.
package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strconv"
	"sync"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

//go:embed assets
var assets embed.FS

// Config is what the console reads.
type Config struct {
	// Statuses returns the statuses of the last full build of a gateway
	// (named as in ?gateway=, "" for the default one), nil before it.
	Statuses func(gateway string) []*dag.Status
	// Cache holds the resources served, and the further gateways' caches.
	Cache *xdscache.Cache
	// Clients tracks the connected xDS clients; nil shows none.
	Clients *Clients
}

// Mux is where Register adds the console's routes: an http.ServeMux, or
// the admin endpoint's mux that lists what it serves.
type Mux interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// Register adds the console's pages at "/" and "/console/", and its JSON
// APIs under "/api/".
func Register(m Mux, cfg Config) {
	c := &console{cfg: cfg, views: map[*xdscache.Cache]*views{}}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "index.html")
	})
	m.Handle("GET /console/", http.StripPrefix("/console/", http.FileServerFS(static)))
	m.HandleFunc("GET /api/objects", c.serveObjects)
	m.HandleFunc("GET /api/hosts", c.serveHosts)
	m.HandleFunc("GET /api/host", c.serveHost)
	m.HandleFunc("GET /api/graph", c.serveGraph)
	m.HandleFunc("GET /api/cluster", c.serveCluster)
	m.HandleFunc("GET /api/cluster/events", c.serveClusterEvents)
	m.HandleFunc("GET /api/clients", c.serveClients)
	m.HandleFunc("GET /api/gateways", c.serveGateways)
}

type console struct {
	cfg Config

	mu sync.Mutex
	// views holds each gateway's views, by the cache that serves it.
	views map[*xdscache.Cache]*views
}

// viewsFor returns the views of the gateway a request names in
// ?gateway= (site/gateways.md), the default one without it; for a gateway
// not served it answers 400 naming those that are, and returns nil.
func (c *console) viewsFor(w http.ResponseWriter, r *http.Request) *views {
	name := r.URL.Query().Get("gateway")
	cache, err := c.cfg.Cache.LookupGateway(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	vs := c.views[cache]
	if vs == nil {
		vs = newViews(cache, func() []*dag.Status {
			if c.cfg.Statuses == nil {
				return nil
			}
			return c.cfg.Statuses(name)
		})
		c.views[cache] = vs
	}
	return vs
}

// gatewayEntry is one gateway of /api/gateways.
type gatewayEntry struct {
	Name    string `json:"name"`
	Default bool   `json:"default,omitempty"`
}

// serveGateways answers /api/gateways: the gateways served, the default
// one first, for the console's gateway selector.
func (c *console) serveGateways(w http.ResponseWriter, _ *http.Request) {
	out := []gatewayEntry{{Name: c.cfg.Cache.DefaultGateway(), Default: true}}
	for _, n := range c.cfg.Cache.Gateways() {
		out = append(out, gatewayEntry{Name: n})
	}
	writeJSON(w, out)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// Paging limits: a page the browser can draw at once, whatever the total.
const (
	defaultLimit = 50
	maxLimit     = 500
)

// page is the paging part of a list request.
type page struct {
	Offset, Limit int
}

func pageOf(r *http.Request) page {
	p := page{Limit: defaultLimit}
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n > 0 {
		p.Limit = min(n, maxLimit)
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("offset")); err == nil && n > 0 {
		p.Offset = n
	}
	return p
}

// slice returns the page's part of a list of n items as [lo, hi).
func (p page) slice(n int) (lo, hi int) {
	lo = min(p.Offset, n)
	return lo, min(lo+p.Limit, n)
}
