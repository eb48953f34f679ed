package incremental

import (
	"sort"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// plainHosts are the host names served over plain HTTP. The plain-HTTP
// listener lists the wildcard ones, and the exact hosts one label below a
// wildcard's domain (see translator.HTTPListener), so it is rebuilt when
// such a name comes or goes, and only then.
type plainHosts struct {
	names map[string]bool
	// rateLimited are the plain hosts that use the rate limit service,
	// whose filter the listener carries (see
	// translator.HTTPListener).
	rateLimited map[string]*dag.RateLimitService
	// rlChanged is set when rateLimited changed; rlPublished is the
	// service of the listener last published.
	rlChanged   bool
	rlPublished *dag.RateLimitService
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

// setRateLimit records the rate limit service a plain host uses, nil for
// none. Whether the listener's filter changes is worked out once per
// update, in publishHTTPListener: with many limited hosts, doing it here
// would cost the whole set for each one.
func (p *plainHosts) setRateLimit(fqdn string, svc *dag.RateLimitService) {
	if svc.Same(p.rateLimited[fqdn]) {
		return
	}
	if p.rateLimited == nil {
		p.rateLimited = map[string]*dag.RateLimitService{}
	}
	if svc == nil {
		delete(p.rateLimited, fqdn)
	} else {
		p.rateLimited[fqdn] = svc
	}
	p.rlChanged = true
}

// rateLimitService is the service of the first rate-limited host in name
// order, as a full build chooses it.
func (p *plainHosts) rateLimitService() *dag.RateLimitService {
	var out *dag.RateLimitService
	first := ""
	for fqdn, svc := range p.rateLimited {
		if out == nil || fqdn < first {
			out, first = svc, fqdn
		}
	}
	return out
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
// whenever its wildcard tables or its rate limit filter changed.
func (e *Engine) publishHTTPListener() {
	if p := &e.plain; p.rlChanged {
		p.rlChanged = false
		if svc := p.rateLimitService(); !svc.Same(p.rlPublished) {
			p.rlPublished, p.changed = svc, true
		}
	}
	if !e.u.initial && !e.plain.changed {
		return
	}
	e.plain.changed = false
	l := translator.HTTPListener(e.cfg.Translator, e.plain.sorted(), e.plain.rlPublished)
	e.set(xdsres.GroupEnvoy, resource.ListenerType, translator.HTTPListenerName, e.keep(encode(l)))
}
