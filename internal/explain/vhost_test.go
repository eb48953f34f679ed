package explain

import (
	"testing"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// TestFindVirtualHost checks Envoy's domain search order on virtual hosts
// the translator does not make today (it rejects wildcard names), so that
// explain stays right for any route configuration.
func TestFindVirtualHost(t *testing.T) {
	vhs := []*envoy_config_route_v3.VirtualHost{
		{Name: "exact", Domains: []string{"www.example.com"}},
		{Name: "suffix", Domains: []string{"*.example.com"}},
		{Name: "longer-suffix", Domains: []string{"*.api.example.com"}},
		{Name: "dash-suffix", Domains: []string{"*-web.example.com"}},
		{Name: "prefix", Domains: []string{"shop.*"}},
		{Name: "port", Domains: []string{"shop.example.org:*"}},
		{Name: "any", Domains: []string{"*"}},
	}
	for _, tc := range []struct{ authority, want string }{
		{"www.example.com", "exact"},
		{"WWW.Example.COM", "exact"},
		{"a.example.com", "suffix"},
		{"a.api.example.com", "longer-suffix"},
		{"shop-web.example.com", "dash-suffix"},
		{"example.com", "any"},         // "*.example.com" needs something before the dot
		{".example.com", "any"},        // and that something may not be empty
		{"shop.example.net", "prefix"}, // no suffix wildcard matches
		{"shop.example.org:8080", "port"},
		{"shop.example.org", "prefix"}, // "shop.example.org:*" needs a port
		{"other.net", "any"},
	} {
		vh, _, why := FindVirtualHost(vhs, tc.authority)
		got := ""
		if vh != nil {
			got = vh.GetName()
		}
		if got != tc.want {
			t.Errorf("%s: got %q (%s), want %q", tc.authority, got, why, tc.want)
		}
	}
	if vh, _, _ := FindVirtualHost(vhs[:1], "nope.example.com"); vh != nil {
		t.Errorf("without a catch-all, an unknown host matches %q", vh.GetName())
	}
	// A suffix wildcard beats a prefix wildcard whatever their lengths.
	vh, _, _ := FindVirtualHost([]*envoy_config_route_v3.VirtualHost{
		{Name: "prefix", Domains: []string{"shop.example.*"}},
		{Name: "suffix", Domains: []string{"*.com"}},
	}, "shop.example.com")
	if vh.GetName() != "suffix" {
		t.Errorf("got %q, want the suffix wildcard", vh.GetName())
	}
}

// TestServerNameRank checks SNI filter chain matching: the exact name
// beats the longest wildcard, which beats a chain without server names.
func TestServerNameRank(t *testing.T) {
	rank := func(names []string, sni string) int { r, _ := serverNameRank(names, sni); return r }
	exact := rank([]string{"a.example.com"}, "a.example.com")
	long := rank([]string{"*.a.example.com"}, "x.a.example.com")
	short := rank([]string{"*.example.com"}, "x.a.example.com")
	none := rank(nil, "x.a.example.com")
	if exact <= long || long <= short || short <= none || none != 0 {
		t.Errorf("ranks exact %d, long wildcard %d, short wildcard %d, none %d: want them in that order", exact, long, short, none)
	}
	if r := rank([]string{"*.example.com"}, "example.com"); r >= 0 {
		t.Errorf("*.example.com matches example.com (rank %d)", r)
	}
	if r := rank([]string{"A.Example.com"}, "a.example.com"); r <= 0 {
		t.Errorf("server names are compared without case, got rank %d", r)
	}
}
