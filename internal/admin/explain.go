package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// serveExplain answers /api/explain: what the resources the cache serves
// right now do with one request, as explain.Result JSON (the same
// document `switchyard explain -o json` prints).
//
// GET takes the request as query parameters: url (required), header
// ("Name: value", repeatable), method, sourceIP, group (envoy or grpc).
// POST takes an explain.Request as a JSON body, for programs. Either way
// ?gateway= picks the gateway whose resources are explained.
func serveExplain(w http.ResponseWriter, r *http.Request, cfg Config) {
	gw, ok := cfg.gateway(w, r)
	if !ok {
		return
	}
	req, err := explainRequest(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	group := xdsres.Group(req.Group)
	if group == "" {
		group = xdsres.GroupEnvoy
	}
	var msgs []proto.Message
	for _, t := range xdsres.TypesOf(group) {
		for _, res := range gw.cache.Resources(group, t) {
			msgs = append(msgs, res.Decoded())
		}
	}
	res := explain.NewResources(msgs)
	res.AddStatuses(gw.statuses())
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

func explainRequest(r *http.Request) (explain.Request, error) {
	var req explain.Request
	if r.Method == http.MethodPost {
		dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, fmt.Errorf("the body is not an explain request: %w", err)
		}
	} else {
		q := r.URL.Query()
		req = explain.Request{URL: q.Get("url"), Method: q.Get("method"), SourceIP: q.Get("sourceIP"), Group: q.Get("group")}
		for _, h := range q["header"] {
			name, value, ok := strings.Cut(h, ":")
			if !ok {
				return req, fmt.Errorf("header %s: want \"Name: value\"", h)
			}
			req.Headers = append(req.Headers, explain.Header{Name: name, Value: strings.TrimSpace(value)})
		}
	}
	if req.URL == "" {
		return req, fmt.Errorf("url is required: /api/explain?url=https://host/path")
	}
	return req, nil
}
