package admin

import (
	"encoding/json"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// serveExplain answers /api/explain: what the resources the cache serves
// right now do with one request, as explain.Result JSON (the same
// document `switchyard explain -o json` prints).
//
// Query parameters: url (required), header ("Name: value", repeatable),
// method, sourceIP, group (envoy or grpc).
func serveExplain(w http.ResponseWriter, r *http.Request, cfg Config) {
	q := r.URL.Query()
	req := explain.Request{URL: q.Get("url"), Method: q.Get("method"), SourceIP: q.Get("sourceIP"), Group: q.Get("group")}
	if req.URL == "" {
		http.Error(w, "url is required: /api/explain?url=https://host/path", http.StatusBadRequest)
		return
	}
	for _, h := range q["header"] {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			http.Error(w, "header "+h+": want \"Name: value\"", http.StatusBadRequest)
			return
		}
		req.Headers = append(req.Headers, explain.Header{Name: name, Value: strings.TrimSpace(value)})
	}
	group := xdscache.Group(req.Group)
	if group == "" {
		group = xdscache.GroupEnvoy
	}
	var msgs []proto.Message
	for _, t := range xdscache.TypesOf(group) {
		for _, res := range cfg.Cache.Resources(group, t) {
			msgs = append(msgs, res.Decoded())
		}
	}
	res := explain.NewResources(msgs)
	if st := cfg.State(); st != nil {
		res.AddStatuses(st.Statuses)
	}
	out, err := explain.Explain(res, req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}
