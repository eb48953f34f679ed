package admin

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/internal/console"
	"github.com/switchyard-dev/switchyard/internal/dag"
)

// endpointHelp describes the admin endpoints for the index at "/api". An
// endpoint without an entry is still listed, by its path alone.
var endpointHelp = map[string]string{
	"/healthz":            "liveness: ok while the process runs",
	"/readyz":             "readiness: ok once the first full build is done",
	"/metrics":            "Prometheus metrics",
	"/debug/dag":          "the DAG of the last build, in Graphviz dot: ?gateway=",
	"/debug/xds":          "the xDS resources a group receives, streamed: ?group=envoy|grpc|dns&type=Cluster&name=shop/*&format=json|yaml&gateway=",
	"/api/explain":        "what the served resources do with one request: GET ?url=...&header=Name:%20value&method=&sourceIP=&group=envoy|grpc&gateway=, or POST the request as JSON",
	"/debug/pprof/":       "Go profiles",
	"/":                   "the web console (site/console.md)",
	"/api":                "this list",
	"/api/objects":        "the console's objects and their status: ?namespace=&kind=&state=&q=&offset=&limit=",
	"/api/hosts":          "the console's virtual hosts: ?q=&broken=true&offset=&limit=",
	"/api/host":           "one virtual host's routes in match order: ?name=",
	"/api/graph":          "one virtual host's graph, proxy to Service: ?host=",
	"/api/cluster":        "one cluster's localities and endpoints: ?name=",
	"/api/cluster/events": "the same, as server-sent events on each change: ?name=",
	"/api/clients":        "the connected xDS clients by group, with the versions they acknowledged and rejected: ?gateway=",
	"/api/gateways":       "the gateways served, the default one first; every /api and /debug view of configuration takes ?gateway=NAME (site/gateways.md)",
	"/console/":           "the console's static files",
}

// indexMux is the admin ServeMux that remembers the paths registered on
// it, so that "/" lists every endpoint without a second list to keep in
// step. It also registers the endpoints defined outside admin.go: the
// explain API and the web console, which owns "/".
type indexMux struct {
	*http.ServeMux
	paths []string
}

func newMux(cfg Config) *indexMux {
	m := &indexMux{ServeMux: http.NewServeMux()}
	m.HandleFunc("GET /api", m.serveIndex)
	m.HandleFunc("GET /api/explain", func(w http.ResponseWriter, r *http.Request) { serveExplain(w, r, cfg) })
	m.HandleFunc("POST /api/explain", func(w http.ResponseWriter, r *http.Request) { serveExplain(w, r, cfg) })
	console.Register(m, console.Config{Statuses: func(gateway string) []*dag.Status {
		gw, err := cfg.gatewayNamed(gateway)
		if err != nil {
			return nil
		}
		return gw.statuses()
	}, Cache: cfg.Cache, Clients: cfg.Clients})
	return m
}

// Handle registers a handler and remembers its path.
func (m *indexMux) Handle(pattern string, h http.Handler) {
	m.remember(pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers a handler function and remembers its path.
func (m *indexMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.remember(pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

// remember keeps a pattern's path, without its method; of the pprof
// subtree only its index is listed.
func (m *indexMux) remember(pattern string) {
	path := pattern
	if _, p, ok := strings.Cut(pattern, " "); ok {
		path = p
	}
	path = strings.TrimSuffix(path, "{$}")
	if strings.HasPrefix(path, "/debug/pprof/") && path != "/debug/pprof/" {
		return
	}
	if !slices.Contains(m.paths, path) {
		m.paths = append(m.paths, path)
	}
}

func (m *indexMux) serveIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "Switchyard admin endpoint")
	fmt.Fprintln(w)
	for _, p := range slices.Sorted(slices.Values(m.paths)) {
		if help := endpointHelp[p]; help != "" {
			fmt.Fprintf(w, "%-20s %s\n", p, help)
		} else {
			fmt.Fprintln(w, p)
		}
	}
}
