// Package admin serves Switchyard's admin endpoint: health and readiness
// for probes, Prometheus metrics, debug views of the DAG and of the xDS
// resources each consumer group receives, and the web console
// (internal/console).
//
// Every handler reads state published by the build loop as immutable
// values (or through the cache's own lock), never the loop's working
// state, so a debug request can never race a build.
package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/console"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// State is what the build loop publishes after each build.
type State struct {
	DAG      *dag.DAG
	Statuses []*dag.Status
	// Gateways holds what the pipeline of each further gateway built, by
	// name; DAG and Statuses are the default gateway's.
	Gateways map[string]*State
}

// Config wires the admin endpoint to the rest of the control plane.
type Config struct {
	// Ready reports whether the first full build is done.
	Ready func() bool
	// State returns the last published state, nil before the first build.
	State func() *State
	// Cache holds the resources served.
	Cache *xdscache.Cache
	// Gatherer provides the metrics.
	Gatherer prometheus.Gatherer
	// Detail, when set, adds a line to /readyz about the source (etcd
	// unreachable and the last configuration served, say) without
	// changing the answer: a replica that serves is ready.
	Detail func() string
	// Programmed returns the last Programmed condition of every HTTPProxy
	// and ExtensionService (nil before the first evaluation); nil when
	// nothing works them out.
	Programmed func() map[objects.Key]xdsres.Programmed
	// Clients tracks the connected xDS clients for the console; nil
	// shows none.
	Clients *console.Clients
}

// Handler returns the admin endpoint's routes.
func Handler(cfg Config) http.Handler {
	mux := newMux(cfg)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !cfg.Ready() {
			http.Error(w, "not ready: the first build has not finished", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
		if cfg.Detail != nil {
			_, _ = w.Write([]byte(cfg.Detail() + "\n"))
		}
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /debug/dag", func(w http.ResponseWriter, r *http.Request) { serveDot(w, r, cfg) })
	mux.HandleFunc("GET /debug/xds", func(w http.ResponseWriter, r *http.Request) { serveXDS(w, r, cfg) })
	mux.HandleFunc("GET /debug/programmed", func(w http.ResponseWriter, _ *http.Request) { serveProgrammed(w, cfg) })
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

func serveDot(w http.ResponseWriter, r *http.Request, cfg Config) {
	gw, ok := cfg.gateway(w, r)
	if !ok {
		return
	}
	var buf bytes.Buffer
	if err := dag.WriteDot(&buf, gw.dag()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// serveXDS prints a group's resources as `switchyard render` would, from
// what the cache actually serves. ?type= keeps one type (its full URL, or
// its name with or without the package: Cluster,
// envoy.config.cluster.v3.Cluster); ?name= keeps the resources of that
// name, or whose names start with it when it ends in "*". Statuses are
// printed only when nothing is filtered out. JSON is written as it is
// encoded, so a large group starts arriving at once and is never held in
// memory whole; YAML is built whole first. ?gateway= picks the gateway.
func serveXDS(w http.ResponseWriter, r *http.Request, cfg Config) {
	gw, ok := cfg.gateway(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	group := xdsres.Group(q.Get("group"))
	if group == "" {
		group = xdsres.GroupEnvoy
	}
	if !slices.Contains(xdsres.Groups, group) {
		http.Error(w, "unknown group: use ?group=envoy, grpc or dns", http.StatusBadRequest)
		return
	}
	var types []string
	for _, t := range xdsres.TypesOf(group) {
		if typeMatches(t, q.Get("type")) {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		http.Error(w, "type "+q.Get("type")+": the "+string(group)+" group serves no such type", http.StatusBadRequest)
		return
	}
	filtered := q.Get("type") != "" || q.Get("name") != ""
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	if format == "json" {
		streamXDS(w, cfg, gw, group, types, q.Get("name"), !filtered)
		return
	}
	out := &render.Output{Resources: map[string][]proto.Message{}}
	for _, t := range types {
		for _, res := range gw.cache.Resources(group, t) {
			if nameMatches(res.Name, q.Get("name")) {
				out.Resources[t] = append(out.Resources[t], res.Decoded())
			}
		}
	}
	if gw.state != nil && !filtered {
		out.Statuses = gw.state.Statuses
		out.Programmed = programmed(cfg)
	}
	b, err := out.Encode(format)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(b)
}

func programmed(cfg Config) map[objects.Key]xdsres.Programmed {
	if cfg.Programmed == nil {
		return nil
	}
	return cfg.Programmed()
}

// programmedEntry is one object in /debug/programmed.
type programmedEntry struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	render.ProgrammedDoc
}

// serveProgrammed lists every HTTPProxy's and ExtensionService's
// Programmed condition, sorted: what the status writer writes on
// Kubernetes, and the only place to see it with a directory source.
func serveProgrammed(w http.ResponseWriter, cfg Config) {
	m := programmed(cfg)
	keys := make([]objects.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, objects.Key.Compare)
	out := struct {
		Objects []programmedEntry `json:"objects"`
	}{Objects: make([]programmedEntry, 0, len(keys))}
	for _, k := range keys {
		out.Objects = append(out.Objects, programmedEntry{Kind: k.Kind.String(), Namespace: k.Namespace, Name: k.Name, ProgrammedDoc: *render.ProgrammedOf(m, k)})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

func typeMatches(typeURL, want string) bool {
	if want == "" || typeURL == want {
		return true
	}
	short := xdsres.ShortType(typeURL)
	return short == want || short[strings.LastIndex(short, ".")+1:] == want
}

func nameMatches(name, want string) bool {
	if prefix, ok := strings.CutSuffix(want, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return want == "" || name == want
}
