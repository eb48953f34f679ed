package explain_test

import (
	"testing"

	"github.com/switchyard-dev/switchyard/internal/explain"
)

// FuzzExplain feeds arbitrary requests to the resources of a golden case
// with every kind of matcher: no request panics, and every request that is
// read gets a decision.
func FuzzExplain(f *testing.F) {
	f.Add("http://search.example.com/?page=12", "X-Tenant", "acme-1", "envoy")
	f.Add("https://admin.example.com:8443/api", "Authorization", "Bearer x", "envoy")
	f.Add("xds:///admin.example.com/healthz", "x", "", "grpc")
	f.Add("http://[::1]:80/%zz?&&=", ":authority", "", "envoy")
	f.Fuzz(func(t *testing.T, url, name, value, group string) {
		if group != "grpc" {
			group = "envoy"
		}
		r, err := explain.Explain(resources(t, "header-and-query-conditions", group), explain.Request{URL: url, Group: group, Headers: []explain.Header{{Name: name, Value: value}}})
		if err != nil {
			return
		}
		if r.Decision.Kind == "" {
			t.Errorf("%q: no decision", url)
		}
	})
}
