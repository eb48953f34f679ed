package dag_test

import (
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
)

// TestEnvoyHeaderValue checks how a header value as written becomes the
// format string Envoy receives, and that Envoy's parser rules (as
// xdscheck.FormatString implements them) accept every result.
func TestEnvoyHeaderValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"50%", "50%%"},
		{"%", "%%"},
		{"%%", "%%%%"},
		{"100% sure, 50%", "100%% sure, 50%%"},
		{"%NOT_A_COMMAND%", "%%NOT_A_COMMAND%%"},
		{"%HOSTNAME%", "%HOSTNAME%"},
		{"%DOWNSTREAM_REMOTE_ADDRESS%:%PROTOCOL%", "%DOWNSTREAM_REMOTE_ADDRESS%:%PROTOCOL%"},
		{"%REQ(x-request-id)%", "%REQ(x-request-id)%"},
		{"%REQ(:authority)%", "%REQ(:authority)%"},
		{"%REQ(x-a?x-b):10%", "%REQ(x-a?x-b):10%"},
		{"%REQ(bad name)%", "%%REQ(bad name)%%"},
		{"%REQ(x)", "%%REQ(x)"},
		// A "%" that is not a command's start: the next one may be.
		{"5%%HOSTNAME%", "5%%%HOSTNAME%"},
		{"a%b%HOSTNAME%", "a%%b%HOSTNAME%"},
		{"%CONTOUR_NAMESPACE%", "shop"},
		{"%SWITCHYARD_NAMESPACE%/%SWITCHYARD_SERVICE_NAME%:%SWITCHYARD_SERVICE_PORT%", "shop/cart:8080"},
		{"%CONTOUR_SERVICE_NAME%-%CONTOUR_SERVICE_PORT%", "cart-8080"},
		{"%SWITCHYARD_SOMETHING%", "%%SWITCHYARD_SOMETHING%%"},
	} {
		got := dag.EnvoyHeaderValue(tc.in, "shop", "cart", "8080")
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
		if err := xdscheck.FormatString(got); err != nil {
			t.Errorf("%q: %v", tc.in, err)
		}
	}
}

// TestEnvoyHeaderValueRouteLevel checks that the service variables stay
// text on a route-level policy, which has no one service.
func TestEnvoyHeaderValueRouteLevel(t *testing.T) {
	if got, want := dag.EnvoyHeaderValue("%CONTOUR_SERVICE_NAME%", "shop", "", ""), "%%CONTOUR_SERVICE_NAME%%"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzEnvoyHeaderValue: whatever the user writes, Envoy can parse it.
func FuzzEnvoyHeaderValue(f *testing.F) {
	for _, s := range []string{"50%", "%HOSTNAME%", "%REQ(a?b):3%", "%%%", "%CONTOUR_NAMESPACE%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := dag.EnvoyHeaderValue(s, "ns%", "svc", "80")
		if err := xdscheck.FormatString(out); err != nil {
			t.Fatalf("%q -> %q: %v", s, out, err)
		}
	})
}
