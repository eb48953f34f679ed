package console

import (
	"net/http"
	"slices"
	"strings"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
)

// object is one row of the objects page.
type object struct {
	Kind        string                      `json:"kind"`
	Namespace   string                      `json:"namespace"`
	Name        string                      `json:"name"`
	State       string                      `json:"state"`
	Description string                      `json:"description"`
	Errors      []switchyardv1.SubCondition `json:"errors,omitempty"`
	Warnings    []switchyardv1.SubCondition `json:"warnings,omitempty"`
	Produces    *produced                   `json:"produces,omitempty"`
}

// objectList is the answer of /api/objects: one page of the objects that
// pass the filters, how many pass them, and the values each filter can
// take, so the page can offer them without loading every object.
type objectList struct {
	Total      int      `json:"total"`
	Offset     int      `json:"offset"`
	Limit      int      `json:"limit"`
	Items      []object `json:"items"`
	Kinds      []string `json:"kinds"`
	States     []string `json:"states"`
	Namespaces []string `json:"namespaces"`
}

// serveObjects answers /api/objects?namespace=&kind=&state=&q=&offset=&limit=.
// q matches a substring of the name.
func (c *console) serveObjects(w http.ResponseWriter, r *http.Request) {
	vs := c.viewsFor(w, r)
	if vs == nil {
		return
	}
	v := vs.current()
	q := r.URL.Query()
	ns, kind, state, name := q.Get("namespace"), q.Get("kind"), q.Get("state"), q.Get("q")
	p := pageOf(r)
	out := objectList{Offset: p.Offset, Limit: p.Limit, Items: []object{}}
	kinds, states, namespaces := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var match []*dag.Status
	for _, st := range v.statuses {
		k := st.Key.Kind.String()
		kinds[k], states[st.State], namespaces[st.Key.Namespace] = true, true, true
		if (ns == "" || st.Key.Namespace == ns) && (kind == "" || k == kind) && (state == "" || st.State == state) && (name == "" || strings.Contains(st.Key.Name, name)) {
			match = append(match, st)
		}
	}
	out.Total = len(match)
	lo, hi := p.slice(len(match))
	for _, st := range match[lo:hi] {
		o := object{Kind: st.Key.Kind.String(), Namespace: st.Key.Namespace, Name: st.Key.Name, State: st.State, Description: st.Description, Errors: st.Errors, Warnings: st.Warnings}
		if o.Kind == "HTTPProxy" {
			o.Produces = v.byProxy[st.Key.Namespace+"/"+st.Key.Name]
		}
		out.Items = append(out.Items, o)
	}
	out.Kinds, out.States, out.Namespaces = sortedKeys(kinds), sortedKeys(states), sortedKeys(namespaces)
	writeJSON(w, out)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
