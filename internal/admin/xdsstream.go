package admin

import (
	"bufio"
	"encoding/json"
	"net/http"

	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// flushEvery is how many resources streamXDS writes between flushes: often
// enough that a reader sees output at once, rarely enough to cost nothing.
const flushEvery = 256

// streamXDS writes the document `switchyard render -o json` prints, one
// resource at a time. An error once output has started can no longer
// change the status code; it ends the document early, which a JSON reader
// reports as truncated.
func streamXDS(w http.ResponseWriter, cfg Config, gw gatewayView, group xdsres.Group, types []string, name string, withStatuses bool) {
	w.Header().Set("Content-Type", "application/json")
	bw := bufio.NewWriter(w)
	flusher, _ := w.(http.Flusher)
	n := 0
	flush := func() {
		_ = bw.Flush()
		if flusher != nil {
			flusher.Flush()
		}
	}
	_, _ = bw.WriteString(`{"resources":{`)
	firstType := true
	for _, t := range types {
		first := true
		for _, res := range gw.cache.Resources(group, t) {
			if !nameMatches(res.Name, name) {
				continue
			}
			raw, err := render.ResourceJSON(res.Decoded())
			if err != nil {
				flush()
				return
			}
			if first {
				if !firstType {
					_, _ = bw.WriteString(",")
				}
				key, _ := json.Marshal(t)
				_, _ = bw.Write(key)
				_, _ = bw.WriteString(":[\n")
				first, firstType = false, false
			} else {
				_, _ = bw.WriteString(",\n")
			}
			_, _ = bw.Write(raw)
			if n++; n%flushEvery == 0 {
				flush()
			}
		}
		if !first {
			_, _ = bw.WriteString("]")
		}
	}
	_, _ = bw.WriteString("}")
	if gw.state != nil && withStatuses {
		out := render.Output{Statuses: gw.state.Statuses, Programmed: programmed(cfg)}
		if b, err := out.Encode("json"); err == nil {
			var doc struct {
				Statuses json.RawMessage `json:"statuses"`
			}
			if json.Unmarshal(b, &doc) == nil {
				_, _ = bw.WriteString(`,"statuses":`)
				_, _ = bw.Write(doc.Statuses)
			}
		}
	}
	_, _ = bw.WriteString("}\n")
	flush()
}
