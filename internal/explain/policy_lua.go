package explain

import (
	"strings"

	envoy_filter_http_lua_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
)

func init() {
	policyExplainers[typeURL(&envoy_filter_http_lua_v3.Lua{})] = luaPolicy
}

// luaPolicy explains the Lua filters Switchyard configures: the plain-HTTP
// host scope script, which the routes step already emulated, and the
// cookie rewrite, which changes only responses. explain runs no Lua, so
// any other script is named and left alone.
func luaPolicy(_ *walk, fc filterContext) Policy {
	l, _ := fc.config.(*envoy_filter_http_lua_v3.Lua)
	switch src := l.GetDefaultSourceCode().GetInlineString(); {
	case strings.Contains(src, `headers:replace("`) && strings.Contains(src, "clearRouteCache"):
		return Policy{Kind: "lua", Effect: "applies", Detail: "computes the plain-HTTP scope key from :authority (shown in the routes step)"}
	case fc.perRoute != nil:
		return Policy{Kind: "lua", Effect: "applies", Detail: "runs this route's script on the response (Switchyard's cookie rewrite): routing is not affected"}
	case src == "":
		return Policy{Kind: "lua", Effect: "skipped", Detail: "no script for this route"}
	}
	return Policy{Kind: "lua", Effect: "unknown", Detail: "runs a Lua script explain does not evaluate"}
}
