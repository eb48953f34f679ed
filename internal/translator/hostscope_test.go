package translator_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/translator"
)

// luaHarness runs the script's envoy_on_request against a stand-in for
// Envoy's stream handle, once per :authority given on the command line
// ("-" for none), and prints each resulting scope key and whether the
// route cache was cleared.
const luaHarness = `
local script = assert(loadfile(arg[1]))
script()
for i = 2, #arg do
  local h = {}
  if arg[i] ~= "-" then h[":authority"] = arg[i] end
  local cleared = false
  local headers = {
    get = function(_, name) return h[name] end,
    replace = function(_, name, value) h[name] = value end,
  }
  local handle = {
    headers = function(_) return headers end,
    clearRouteCache = function(_) cleared = true end,
  }
  envoy_on_request(handle)
  print(h["x-switchyard-host-scope"] .. " " .. tostring(cleared))
end
`

// TestHostScopeScript runs the plain-HTTP listener's Lua with LuaJIT,
// the Lua Envoy embeds, and checks the scope key of each Host: lowercased,
// without port, an exact host before a wildcard, a wildcard for one label
// only. It is skipped where no luajit is installed.
func TestHostScopeScript(t *testing.T) {
	luajit, err := exec.LookPath("luajit")
	if err != nil {
		t.Skip("luajit is not installed")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "scope.lua")
	harness := filepath.Join(dir, "harness.lua")
	hosts := []string{"*.example.com", "api.example.com", "shop.example.org", "*.b.example.net"}
	if err := os.WriteFile(script, []byte(translator.HostScopeScript(hosts)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(harness, []byte(luaHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ authority, key string }{
		{"shop.example.org", "shop.example.org"},
		{"Shop.Example.ORG:8080", "shop.example.org"},
		{"api.example.com", "api.example.com"},
		{"API.example.com:80", "api.example.com"},
		{"www.example.com", "*.example.com"},
		{"WWW.Example.Com:8080", "*.example.com"},
		{"a.b.example.com", "a.b.example.com"},
		{"example.com", "example.com"},
		{"x.b.example.net", "*.b.example.net"},
		{"[::1]:8080", "[::1]"},
		{"-", ""},
	}
	args := []string{harness, script}
	for _, c := range cases {
		args = append(args, c.authority)
	}
	out, err := exec.Command(luajit, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("luajit: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("got %d results for %d cases:\n%s", len(lines), len(cases), out)
	}
	for i, c := range cases {
		if want := c.key + " true"; lines[i] != want {
			t.Errorf("Host %q: got %q, want %q", c.authority, lines[i], want)
		}
	}
}
