package incremental

import (
	"sort"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// plainHosts are the host names served over plain HTTP. The plain-HTTP
// listener lists the wildcard ones, and the exact hosts one label below a
// wildcard's domain (see translator.HTTPListener), so it is rebuilt when
// such a name comes or goes, and only then.
type plainHosts struct {
	names map[string]bool
	// changed is set when a name the listener lists came or went.
	changed bool
}

func (p *plainHosts) set(fqdn string, present bool) {
	if p.names == nil {
		p.names = map[string]bool{}
	}
	if p.names[fqdn] == present {
		return
	}
	if present {
		p.names[fqdn] = true
	} else {
		delete(p.names, fqdn)
	}
	_, parent, _ := strings.Cut(fqdn, ".")
	if strings.HasPrefix(fqdn, "*.") || p.names["*."+parent] {
		p.changed = true
	}
}

func (p *plainHosts) sorted() []string {
	out := make([]string, 0, len(p.names))
	for n := range p.names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// publishHTTPListener sets the plain-HTTP listener on the first update and
// whenever its wildcard tables changed.
func (e *Engine) publishHTTPListener() {
	if !e.u.initial && !e.plain.changed {
		return
	}
	e.plain.changed = false
	l := translator.HTTPListener(e.cfg.Translator, e.plain.sorted())
	e.set(xdsres.GroupEnvoy, resource.ListenerType, translator.HTTPListenerName, e.keep(encode(l)))
}
