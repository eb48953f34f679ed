package translator_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// cookieHarness runs the script's envoy_on_response on one response whose
// Set-Cookie headers are the command-line arguments (after the script),
// next to another header, with a stand-in for Envoy's header map that, as
// Envoy's, iterates with pairs and fails if changed while iterating. It
// prints the Set-Cookie headers after the call, one a line.
const cookieHarness = `
local script = assert(loadfile(arg[1]))
script()
local list = {{"content-type", "text/plain"}}
for i = 2, #arg do list[#list + 1] = {"set-cookie", arg[i]} end
local iterating = false
local headers = setmetatable({
  remove = function(_, name)
    assert(not iterating, "changed while iterating")
    local kept = {}
    for _, kv in ipairs(list) do if kv[1] ~= name then kept[#kept + 1] = kv end end
    list = kept
  end,
  add = function(_, name, value)
    assert(not iterating, "changed while iterating")
    list[#list + 1] = {name, value}
  end,
}, {__pairs = function(_)
  local i = 0
  iterating = true
  return function()
    i = i + 1
    if list[i] == nil then iterating = false return nil end
    return list[i][1], list[i][2]
  end
end})
-- LuaJIT (Lua 5.1) has no __pairs: give pairs the same meaning.
local rawpairs = pairs
pairs = function(t)
  local mt = getmetatable(t)
  if mt and mt.__pairs then return mt.__pairs(t) end
  return rawpairs(t)
end
envoy_on_response({headers = function(_) return headers end})
for _, kv in ipairs(list) do if kv[1] == "set-cookie" then print(kv[2]) end end
`

// TestCookieScript runs the cookie rewrite Lua with LuaJIT, the Lua Envoy
// embeds: attributes are replaced, added or removed for the named cookies
// only, whatever their case and spacing. It is skipped where no luajit is
// installed.
func TestCookieScript(t *testing.T) {
	luajit, err := exec.LookPath("luajit")
	if err != nil {
		t.Skip("luajit is not installed")
	}
	str := func(s string) *string { return &s }
	yes, no := true, false
	script := translator.CookieScript([]dag.CookieRewrite{
		{Name: "session", Path: str("/app"), Secure: &yes, SameSite: "Strict"},
		{Name: "pref", Domain: str("example.com"), Secure: &no},
	})
	dir := t.TempDir()
	paths := map[string]string{"script.lua": script, "harness.lua": cookieHarness}
	for name, body := range paths {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := []string{
		"session=abc; Path=/; HttpOnly; samesite=lax",
		"pref=dark; Domain=old.example.com; secure; Max-Age=60",
		"other=1; Path=/x; Secure",
		"session=again",
	}
	want := []string{
		"session=abc; HttpOnly; Path=/app; Secure; SameSite=Strict",
		"pref=dark; Max-Age=60; Domain=example.com",
		"other=1; Path=/x; Secure",
		"session=again; Path=/app; Secure; SameSite=Strict",
	}
	args := append([]string{filepath.Join(dir, "harness.lua"), filepath.Join(dir, "script.lua")}, in...)
	out, err := exec.Command(luajit, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("luajit: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
