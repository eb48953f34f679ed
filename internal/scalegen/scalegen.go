// Package scalegen generates a realistic set of Switchyard objects of a
// given size: teams with their namespaces, root HTTPProxies that own host
// names, team proxies that roots include (some across namespaces),
// Services with named ports, EndpointSlices spread over zones with a mix of
// ready and terminating endpoints, TLS Secrets with a delegation, and
// ExtensionServices that roots use for authorization.
//
// Every object it makes builds Valid. The same objects serve capacity
// planning (`switchyard gen` writes them as manifests) and the benchmarks,
// which take them in memory and skip YAML altogether.
//
// The output is a function of the Config, seed included, except for the one
// TLS key pair, which is generated afresh by every call and shared by every
// Secret.
package scalegen

import (
	"fmt"
	"math/rand"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Config is the size and shape of a generated set.
type Config struct {
	// Proxies is the number of HTTPProxies, roots and included team
	// proxies together.
	Proxies int
	// Included is how many of the Proxies are team proxies that a root
	// includes, spread evenly; 0 keeps the historical shape of one proxy
	// in five. At most half of the proxies can be included, so that every
	// included proxy has a root just before it.
	Included int
	// RoutesPerProxy, ServicesPerRoute and EndpointsPerService size each
	// proxy: every route forwards to its own Services (weighted when there
	// are several), so a proxy makes RoutesPerProxy clusters.
	RoutesPerProxy      int
	ServicesPerRoute    int
	EndpointsPerService int
	// Zones spreads each Service's endpoints over that many zones.
	Zones int
	// TLSFraction of the roots terminate TLS (0 to 1).
	TLSFraction float64
	// Seed picks which roots get TLS and authorization.
	Seed int64
	// TeamSize is the number of proxies per team namespace; 0 means
	// DefaultTeamSize.
	TeamSize int
}

// DefaultTeamSize is how many proxies share a namespace by default.
const DefaultTeamSize = 10

// Defaults returns a mid-sized configuration: 1,000 proxies of two routes,
// one service per route and five endpoints per service in three zones,
// half of the roots with TLS.
func Defaults() Config {
	return Config{
		Proxies:             1000,
		RoutesPerProxy:      2,
		ServicesPerRoute:    1,
		EndpointsPerService: 5,
		Zones:               3,
		TLSFraction:         0.5,
		Seed:                1,
	}
}

// DirectoryShape returns the shape site/performance.md measures the
// directory read, the time to first config and the live heap on, and
// `make bench-dir` writes with `switchyard gen`: per root, a tenth of an
// included proxy; two routes per proxy, each to three weighted Services of
// three endpoints in two zones; half of the roots on TLS. Its figures
// cannot be flattered by Defaults' lighter proxies.
func DirectoryShape(roots int) Config {
	c := Defaults()
	c.Proxies, c.Included = roots+roots/10, roots/10
	c.ServicesPerRoute, c.EndpointsPerService, c.Zones = 3, 3, 2
	return c
}

// Validate reports a configuration that cannot be generated.
func (c Config) Validate() error {
	switch {
	case c.Proxies < 1:
		return fmt.Errorf("proxies: %d must be at least 1", c.Proxies)
	case c.Included < 0 || c.Included > c.Proxies/2:
		return fmt.Errorf("included: %d must be between 0 and half of the proxies (%d)", c.Included, c.Proxies/2)
	case c.RoutesPerProxy < 1:
		return fmt.Errorf("routes per proxy: %d must be at least 1", c.RoutesPerProxy)
	case c.ServicesPerRoute < 1:
		return fmt.Errorf("services per route: %d must be at least 1", c.ServicesPerRoute)
	case c.EndpointsPerService < 0:
		return fmt.Errorf("endpoints per service: %d must not be negative", c.EndpointsPerService)
	case c.Zones < 1:
		return fmt.Errorf("zones: %d must be at least 1", c.Zones)
	case c.TLSFraction < 0 || c.TLSFraction > 1:
		return fmt.Errorf("tls fraction: %g must be between 0 and 1", c.TLSFraction)
	case c.TeamSize < 0:
		return fmt.Errorf("team size: %d must not be negative", c.TeamSize)
	case c.EndpointsPerService*c.RoutesPerProxy*c.ServicesPerRoute*c.Proxies > maxEndpoints:
		return fmt.Errorf("%d endpoints in all: over the limit of %d addresses", c.EndpointsPerService*c.RoutesPerProxy*c.ServicesPerRoute*c.Proxies, maxEndpoints)
	}
	return nil
}

func (c Config) teamSize() int {
	if c.TeamSize <= 0 {
		return DefaultTeamSize
	}
	return c.TeamSize
}

// Set is a generated set of objects.
type Set struct {
	// Objects are in a fixed order: per namespace, proxies first, then
	// Services and their EndpointSlices, Secrets, delegations and
	// ExtensionServices.
	Objects []runtime.Object
	// Namespaces lists the namespaces in Objects' order, with the index of
	// each one's first object, for writing one file per namespace.
	Namespaces []Namespace
}

// Namespace is one namespace's run of objects in Set.Objects.
type Namespace struct {
	Name  string
	Start int
	End   int
}

// Snapshot returns a new snapshot holding the set's objects.
func (s *Set) Snapshot() *objects.Snapshot {
	snap := objects.NewSnapshot()
	for _, o := range s.Objects {
		if _, err := snap.Upsert(o); err != nil {
			// Generate only makes supported kinds.
			panic(err)
		}
	}
	return snap
}

// Changes returns the set as one batch of upserts, the way a source
// delivers its first complete view.
func (s *Set) Changes() []objects.Change {
	out := make([]objects.Change, 0, len(s.Objects))
	for _, o := range s.Objects {
		k, err := objects.KeyOf(o)
		if err != nil {
			panic(err)
		}
		out = append(out, objects.Change{Key: k, Object: o})
	}
	return out
}

// Generate makes the objects of a configuration.
func Generate(cfg Config) (*Set, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	kp, err := newKeyPair()
	if err != nil {
		return nil, err
	}
	g := &generator{cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), keys: kp, set: &Set{}}
	g.plan()
	g.emit()
	return g.set, nil
}
