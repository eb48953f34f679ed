package explain

import (
	"strings"

	envoy_filter_http_lua_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// hostScopeFilterName is the filter Switchyard's plain-HTTP listener
// computes its scope key with.
const hostScopeFilterName = "envoy.filters.http.lua"

// setLuaScopeHeaders emulates Switchyard's host scope script: scope keys
// compare as exact strings, so the plain-HTTP listener's Lua filter writes
// the key (the host lowercased without its port, or the wildcard host that
// serves it) into a header before scoped routing reads it. explain does
// not run Lua; for each key header a Lua filter of the connection manager
// replaces, it computes what that script would. It reports the headers it
// set.
func (w *walk) setLuaScopeHeaders(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager, b *envoy_filter_network_http_connection_manager_v3.ScopedRoutes_ScopeKeyBuilder) []string {
	var set []string
	for _, f := range b.GetFragments() {
		name := strings.ToLower(f.GetHeaderValueExtractor().GetName())
		if name == "" || !luaReplaces(hcm, name) {
			continue
		}
		w.req.headers[name] = []string{w.hostScope()}
		set = append(set, name)
	}
	return set
}

// luaReplaces reports whether a Lua filter of the connection manager
// replaces the header.
func luaReplaces(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager, header string) bool {
	for _, f := range hcm.GetHttpFilters() {
		if f.GetName() != hostScopeFilterName {
			continue
		}
		l := &envoy_filter_http_lua_v3.Lua{}
		if f.GetTypedConfig().UnmarshalTo(l) != nil {
			continue
		}
		if strings.Contains(l.GetDefaultSourceCode().GetInlineString(), `headers:replace("`+header+`"`) {
			return true
		}
	}
	return false
}

// hostScope is the key the host scope script computes: the authority
// lowercased, without a trailing ":digits"; when no scope has that key
// and a wildcard scope covers its first label, the wildcard.
func (w *walk) hostScope() string {
	host := strings.ToLower(w.req.Authority)
	if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.Trim(host[i+1:], "0123456789") == "" {
		host = host[:i]
	}
	if w.hasScope(host) {
		return host
	}
	if dot := strings.IndexByte(host, '.'); dot >= 0 && w.hasScope("*"+host[dot:]) {
		return "*" + host[dot:]
	}
	return host
}

// hasScope reports whether a served scope has the one-fragment key.
func (w *walk) hasScope(key string) bool {
	for _, s := range w.res.Scopes {
		if scopeMatches(s, []string{key}) {
			return true
		}
	}
	return false
}
