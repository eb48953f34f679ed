package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// withGateway adds ?gateway= to a path, nothing for the default gateway.
func withGateway(path, gateway string) string {
	if gateway == "" {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "gateway=" + url.QueryEscape(gateway)
}

// TestAdminEndpointsPerGateway: every admin view of configuration answers
// for the gateway ?gateway= names (the default one without it), over the
// three gateways of gatewaysSetup, which serve one host name from three
// Services: each view shows its gateway's Service and proxy, and neither
// of the others'. A gateway not served is a 400 naming those that are.
func TestAdminEndpointsPerGateway(t *testing.T) {
	s := gatewaysSetup(t)
	warmUp(t, grpcGatewayClient(t, s.XDSAddr(), "a", "app.example.com"), "a")

	svc := map[string]string{"": "c", "a": "a", "b": "b"}
	proxy := map[string]string{"": "app-default", "a": "app-a", "b": "app-b"}
	// The name of each gateway's one cluster, from its host's route.
	cluster := map[string]string{}
	for gw := range svc {
		var h struct {
			Routes []struct{ Clusters []struct{ Name string } }
		}
		_, body := adminGet(t, s.Server, withGateway("/api/host?name=app.example.com", gw))
		if err := json.Unmarshal([]byte(body), &h); err != nil || len(h.Routes) != 1 || len(h.Routes[0].Clusters) != 1 {
			t.Fatalf("gateway %q: /api/host = %s (%v), want one route to one cluster", gw, body, err)
		}
		cluster[gw] = h.Routes[0].Clusters[0].Name
		if !strings.HasPrefix(cluster[gw], "shop/"+svc[gw]+"/") {
			t.Errorf("gateway %q routes app.example.com to %s, want Service shop/%s's cluster", gw, cluster[gw], svc[gw])
		}
	}

	for _, tc := range []struct {
		endpoint string
		path     string
		// marks returns what the answer must hold for gateway gw; the
		// other gateways' marks must be absent.
		marks func(gw string) []string
	}{
		{"dag", "/debug/dag", func(gw string) []string { return []string{"shop/" + proxy[gw]} }},
		{"xds", "/debug/xds", func(gw string) []string { return []string{cluster[gw], `"name": "` + proxy[gw] + `"`} }},
		{"xds yaml", "/debug/xds?format=yaml&type=Cluster", func(gw string) []string { return []string{"name: " + cluster[gw]} }},
		{"explain", "/api/explain?url=" + url.QueryEscape("https://app.example.com/"), func(gw string) []string { return []string{cluster[gw]} }},
		{"objects", "/api/objects?kind=HTTPProxy", func(gw string) []string { return []string{`"name":"` + proxy[gw] + `"`} }},
		{"hosts", "/api/hosts", func(gw string) []string { return []string{`"proxy":"shop/` + proxy[gw] + `"`} }},
		{"graph", "/api/graph?host=app.example.com", func(gw string) []string { return []string{"cluster:" + cluster[gw]} }},
		{"cluster", "/api/cluster?name=", func(gw string) []string { return []string{`"service":"shop/` + svc[gw] + `"`} }},
		{"clients", "/api/clients", func(gw string) []string {
			if gw == "a" {
				return []string{`"node":"e2e-` + t.Name() + `-a"`}
			}
			return nil
		}},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			for gw := range svc {
				path := tc.path
				if tc.endpoint == "cluster" {
					path += url.QueryEscape(cluster[gw])
				}
				code, body := adminGet(t, s.Server, withGateway(path, gw))
				if code != http.StatusOK {
					t.Fatalf("gateway %q: %s = %d %s", gw, path, code, body)
				}
				for _, want := range tc.marks(gw) {
					if !strings.Contains(body, want) {
						t.Errorf("gateway %q: %s lacks %s:\n%s", gw, path, want, body)
					}
				}
				for other := range svc {
					if other == gw {
						continue
					}
					for _, not := range tc.marks(other) {
						if strings.Contains(body, not) {
							t.Errorf("gateway %q: %s shows gateway %q's %s:\n%s", gw, path, other, not, body)
						}
					}
				}
			}
			code, body := adminGet(t, s.Server, withGateway(tc.path, "nope"))
			if code != http.StatusBadRequest || !strings.Contains(body, `unknown gateway "nope"`) || !strings.Contains(body, `"a", "b"`) {
				t.Errorf("%s for a gateway not served = %d %q, want 400 naming a and b", tc.path, code, body)
			}
		})
	}

	var gateways []struct {
		Name    string
		Default bool
	}
	_, body := adminGet(t, s.Server, "/api/gateways")
	if err := json.Unmarshal([]byte(body), &gateways); err != nil || len(gateways) != 3 || !gateways[0].Default || gateways[1].Name != "a" || gateways[2].Name != "b" {
		t.Errorf("/api/gateways = %s (%v), want the default, a and b", body, err)
	}
}
