package xdscache

import (
	"strings"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// A gRPC client asks for the listener named by its dial target
// (xds:///api.example.com asks for "api.example.com"), which no
// translation can list in advance for a wildcard host. For the grpc group's
// listeners, a name the cache does not hold is therefore answered with the
// listener of the wildcard host that serves it ("*.example.com", or
// "*.example.com:443" for "api.example.com:443"), renamed: an alias. An
// exact listener, when there is one, always wins, as exact hosts do.

// aliasEntry is an alias built from one version of its wildcard listener.
type aliasEntry struct {
	from string // the wildcard listener's version
	res  *xdsres.Resource
}

// lookup returns the resource a stream subscribed to name receives: the
// resource of that name, or, where aliases are enabled, the alias of the
// wildcard listener that serves it.
func (t *typeState) lookup(name string) (*xdsres.Resource, bool) {
	if r, ok := t.resources.Lookup(name); ok || !t.wildcardAliases {
		return r, ok
	}
	wc, ok := wildcardFor(name)
	if !ok {
		return nil, false
	}
	src, ok := t.resources.Lookup(wc)
	if !ok {
		delete(t.aliases, name)
		return nil, false
	}
	if a, ok := t.aliases[name]; ok && a.from == src.Version {
		return a.res, true
	}
	l, ok := src.Decoded().(*envoy_config_listener_v3.Listener)
	if !ok {
		return nil, false
	}
	l.Name = name
	r, err := xdsres.Encode(l)
	if err != nil {
		return nil, false
	}
	if t.aliases == nil {
		t.aliases = map[string]aliasEntry{}
	}
	t.aliases[name] = aliasEntry{from: src.Version, res: r}
	return r, true
}

// wildcardFor returns the wildcard name that would serve name: its first
// DNS label replaced by "*". A name that is a wildcard itself, or has a
// single label, has none.
func wildcardFor(name string) (string, bool) {
	label, rest, ok := strings.Cut(name, ".")
	if !ok || label == "" || strings.ContainsAny(label, "*:") || !strings.Contains(strings.SplitN(rest, ":", 2)[0], ".") {
		return "", false
	}
	return "*." + rest, true
}

// widen turns the names an update changed into the names to check: when
// aliases are enabled and a wildcard listener changed, every subscribed
// name may be its alias, so everything is checked (nil).
func (t *typeState) widen(changed map[string]bool) map[string]bool {
	if !t.wildcardAliases || changed == nil {
		return changed
	}
	for name := range changed {
		if strings.HasPrefix(name, "*.") {
			return nil
		}
	}
	return changed
}
