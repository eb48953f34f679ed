package admin

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// endpointHelp describes the admin endpoints for the index at "/". An
// endpoint without an entry is still listed, by its path alone.
var endpointHelp = map[string]string{
	"/healthz":      "liveness: ok while the process runs",
	"/readyz":       "readiness: ok once the first full build is done",
	"/metrics":      "Prometheus metrics",
	"/debug/dag":    "the DAG of the last build, in Graphviz dot",
	"/debug/xds":    "the xDS resources a group receives: ?group=envoy|grpc|dns&format=json|yaml",
	"/api/explain":  "what the served resources do with one request: ?url=...&header=Name:%20value&method=&sourceIP=&group=envoy|grpc",
	"/debug/pprof/": "Go profiles",
}

// indexMux is the admin ServeMux that remembers the paths registered on
// it, so that "/" lists every endpoint without a second list to keep in
// step. It also registers the endpoints defined outside admin.go.
type indexMux struct {
	*http.ServeMux
	paths []string
}

func newMux(cfg Config) *indexMux {
	m := &indexMux{ServeMux: http.NewServeMux()}
	m.ServeMux.HandleFunc("GET /{$}", m.serveIndex)
	m.HandleFunc("GET /api/explain", func(w http.ResponseWriter, r *http.Request) { serveExplain(w, r, cfg) })
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
			fmt.Fprintf(w, "%-15s %s\n", p, help)
		} else {
			fmt.Fprintln(w, p)
		}
	}
}
