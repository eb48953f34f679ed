package scalegen

import (
	"fmt"
	"math/rand"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Namespaces outside the teams'.
const (
	certsNamespace = "certs"
	authNamespace  = "auth"
	wildcardSecret = "wildcard"
	teamSecret     = "team-tls"
)

// maxEndpoints is how many distinct addresses 10.0.0.0/8 offers.
const maxEndpoints = 1<<24 - 2

// proxyPlan is what one HTTPProxy will be.
type proxyPlan struct {
	namespace string
	name      string
	root      bool
	// children are the proxies a root includes.
	children []int
	tls      bool
	// delegated roots use the shared certificate of namespace certs.
	delegated bool
	// authz is the ExtensionService index a root checks requests with, -1
	// for none.
	authz int
}

type generator struct {
	cfg     Config
	rng     *rand.Rand
	keys    keyPair
	set     *Set
	proxies []proxyPlan
	// nextIP numbers endpoint addresses, so that every one is distinct.
	nextIP int
	exts   int
}

// plan decides the role of every proxy. By default every fifth proxy is a
// team proxy without a host name, included by a root: the proxy just before
// it (same namespace) for half of them, and for the other half a root eleven
// places back, which sits in the previous team's namespace. With
// Config.Included the included proxies are spread evenly instead, and
// alternate between the same two parents.
func (g *generator) plan() {
	n := g.cfg.Proxies
	g.exts = max(1, n/1000)
	g.proxies = make([]proxyPlan, n)
	for i := range g.proxies {
		p := &g.proxies[i]
		p.namespace = fmt.Sprintf("team-%d", i/g.cfg.teamSize())
		p.name = fmt.Sprintf("app-%d", i)
		p.authz = -1
		p.root = g.isRoot(i)
	}
	included := 0
	for i := range g.proxies {
		p := &g.proxies[i]
		if p.root {
			continue
		}
		parent := i - 1
		far := (i/5)%2 == 1
		if g.cfg.Included > 0 {
			far = included%2 == 1
		}
		if far && i >= 11 && g.proxies[i-11].root {
			parent = i - 11
		}
		included++
		g.proxies[parent].children = append(g.proxies[parent].children, i)
	}
	for i := range g.proxies {
		p := &g.proxies[i]
		if !p.root || g.rng.Float64() >= g.cfg.TLSFraction {
			continue
		}
		p.tls = true
		p.delegated = g.rng.Intn(4) == 0
		if g.rng.Intn(10) == 0 {
			p.authz = g.rng.Intn(g.exts)
		}
	}
}

// isRoot reports whether proxy i owns a host name. Spreading Included
// proxies as a line is drawn (one wherever i*Included/Proxies steps up)
// never puts two side by side, since at most half are included, nor makes
// proxy 0 an included one.
func (g *generator) isRoot(i int) bool {
	k, n := g.cfg.Included, g.cfg.Proxies
	if k == 0 {
		return i%5 != 4
	}
	return (i+1)*k/n == i*k/n
}

// emit appends every object, one namespace at a time.
func (g *generator) emit() {
	size := g.cfg.teamSize()
	for start := 0; start < len(g.proxies); start += size {
		team := g.proxies[start:min(start+size, len(g.proxies))]
		g.namespace(team[0].namespace, func() { g.team(team) })
	}
	delegated := false
	for _, p := range g.proxies {
		delegated = delegated || p.delegated
	}
	if delegated {
		g.namespace(certsNamespace, func() {
			g.add(g.tlsSecret(certsNamespace, wildcardSecret), delegation(certsNamespace, wildcardSecret))
		})
	}
	g.namespace(authNamespace, func() {
		for i := range g.exts {
			name := fmt.Sprintf("authz-%d", i)
			g.add(extensionService(name))
			g.backend(authNamespace, name, "grpc", 9001, 9001)
		}
	})
}

// namespace runs fill and records the objects it added as one namespace.
func (g *generator) namespace(name string, fill func()) {
	start := len(g.set.Objects)
	fill()
	g.set.Namespaces = append(g.set.Namespaces, Namespace{Name: name, Start: start, End: len(g.set.Objects)})
}

func (g *generator) add(objs ...runtime.Object) {
	for _, o := range objs {
		// As a source holds them, so that the benchmarks' heap is a
		// source's.
		objects.Compact(o)
	}
	g.set.Objects = append(g.set.Objects, objs...)
}

// team emits one team's proxies, then their Services and endpoints, then
// the team's certificate if one of its roots uses it.
func (g *generator) team(team []proxyPlan) {
	needsSecret := false
	for i := range team {
		g.add(g.proxy(&team[i]))
		needsSecret = needsSecret || (team[i].tls && !team[i].delegated)
	}
	for i := range team {
		p := &team[i]
		for r := range g.cfg.RoutesPerProxy {
			for s := range g.cfg.ServicesPerRoute {
				g.backend(p.namespace, serviceName(p, r, s), "http", 80, 8080)
			}
		}
	}
	if needsSecret {
		g.add(g.tlsSecret(team[0].namespace, teamSecret))
	}
}

func serviceName(p *proxyPlan, route, service int) string {
	return fmt.Sprintf("%s-r%d-s%d", p.name, route, service)
}

// fqdn is the host name of the root proxy with the given namespace and
// name.
func fqdn(namespace, name string) string {
	return name + "." + namespace + ".example.com"
}
