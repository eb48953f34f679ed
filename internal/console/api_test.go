package console_test

import (
	"net/http"
	"testing"

	"github.com/switchyard-dev/switchyard/examples"
)

// TestAPIPagingAndFilters checks the server-side paging and filtering the
// pages rely on, on the quickstart, without a browser.
func TestAPIPagingAndFilters(t *testing.T) {
	dir := t.TempDir()
	if err := examples.WriteQuickstart(dir); err != nil {
		t.Fatal(err)
	}
	base, _ := serveDir(t, dir)

	type list struct {
		Total, Offset, Limit int
		Items                []struct{ Kind, Namespace, Name, State string }
		Namespaces           []string
	}
	var all, page, ns list
	getJSON(t, base+"/api/objects", &all)
	if all.Total != 2 || len(all.Items) != 2 || len(all.Namespaces) != 2 {
		t.Fatalf("/api/objects = %+v, want the quickstart's two HTTPProxies in two namespaces", all)
	}
	getJSON(t, base+"/api/objects?limit=1&offset=1", &page)
	if page.Total != 2 || len(page.Items) != 1 || page.Items[0] != all.Items[1] {
		t.Errorf("the second page of one = %+v, want %+v of 2", page, all.Items[1])
	}
	getJSON(t, base+"/api/objects?namespace=shop&kind=HTTPProxy&state=valid", &ns)
	if ns.Total != 1 || ns.Items[0].Name != "storefront" {
		t.Errorf("namespace shop = %+v, want storefront alone", ns)
	}
	getJSON(t, base+"/api/objects?limit=100000", &page)
	if page.Limit != 500 {
		t.Errorf("limit=100000 gave a page of %d, want it capped at 500", page.Limit)
	}
	getJSON(t, base+"/api/objects?state=invalid", &page)
	if page.Total != 0 || page.Items == nil {
		t.Errorf("no invalid objects = %+v, want an empty list, not null", page)
	}
	var hosts list
	getJSON(t, base+"/api/hosts?broken=true", &hosts)
	if hosts.Total != 0 {
		t.Errorf("the quickstart has broken hosts: %+v", hosts)
	}
	for _, u := range []string{"/api/host?name=nope", "/api/graph?host=nope", "/api/cluster?name=nope"} {
		r, err := http.Get(base + u)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Body.Close()
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("%s = %d, want 404", u, r.StatusCode)
		}
	}
}
