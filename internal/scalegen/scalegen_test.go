package scalegen

import (
	"bytes"
	"testing"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func smallConfig() Config {
	return Config{
		Proxies: 120, RoutesPerProxy: 3, ServicesPerRoute: 2, EndpointsPerService: 12,
		Zones: 2, TLSFraction: 0.6, Seed: 7,
	}
}

// TestEveryObjectIsValid renders a generated set for every consumer group
// and requires every status to be Valid.
func TestEveryObjectIsValid(t *testing.T) {
	set, err := Generate(smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	snap := set.Snapshot()
	for _, group := range xdsres.Names() {
		out, err := render.Run(snap, render.Options{Group: xdsres.Group(group), Translator: translator.DefaultOptions()})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range out.Statuses {
			if st.State != switchyardv1.StatusValid {
				t.Errorf("%s: %s %s: %s", group, st.Key, st.State, st.Description)
			}
		}
		if want := len(snap.HTTPProxies) + len(snap.ExtensionServices) + len(snap.Delegations); len(out.Statuses) != want {
			t.Errorf("%s: %d statuses, want one per proxy, extension and delegation (%d)", group, len(out.Statuses), want)
		}
		if len(out.Resources) == 0 && group != "mesh" { // no mesh without --mesh
			t.Errorf("%s: no resources", group)
		}
	}
}

// TestShape checks that the features the benchmarks rely on are all there.
func TestShape(t *testing.T) {
	cfg := smallConfig()
	set, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	snap := set.Snapshot()
	var roots, tls, delegated, authz, crossIncludes int
	for _, p := range snap.HTTPProxies {
		for _, inc := range p.Spec.Includes {
			if inc.Namespace != "" && inc.Namespace != p.Namespace {
				crossIncludes++
			}
		}
		vh := p.Spec.VirtualHost
		if vh == nil {
			continue
		}
		roots++
		if vh.TLS != nil {
			tls++
			if vh.TLS.SecretName == certsNamespace+"/"+wildcardSecret {
				delegated++
			}
		}
		if vh.Authorization != nil {
			authz++
		}
	}
	if len(snap.HTTPProxies) != cfg.Proxies || roots != cfg.Proxies*4/5 {
		t.Errorf("%d proxies and %d roots, want %d and %d", len(snap.HTTPProxies), roots, cfg.Proxies, cfg.Proxies*4/5)
	}
	if tls == 0 || delegated == 0 || authz == 0 || crossIncludes == 0 {
		t.Errorf("want TLS roots (%d), delegated certificates (%d), authorization (%d) and includes across namespaces (%d)", tls, delegated, authz, crossIncludes)
	}
	if want := cfg.Proxies * cfg.RoutesPerProxy * cfg.ServicesPerRoute; len(snap.Services) != want+len(snap.ExtensionServices) {
		t.Errorf("%d services, want %d", len(snap.Services), want+len(snap.ExtensionServices))
	}
	if len(snap.EndpointSlices) != len(snap.Services) {
		t.Errorf("%d slices for %d services", len(snap.EndpointSlices), len(snap.Services))
	}
	addrs := map[string]bool{}
	terminating := 0
	for _, es := range snap.EndpointSlices {
		for _, ep := range es.Endpoints {
			if addrs[ep.Address] {
				t.Fatalf("address %s used twice", ep.Address)
			}
			addrs[ep.Address] = true
			if *ep.Conditions().Terminating {
				terminating++
			}
		}
	}
	if terminating == 0 {
		t.Error("no terminating endpoints")
	}
}

// TestWriteRoundTrip writes a set as manifests, reads it back with the
// directory source, and requires the same render output as in memory.
func TestWriteRoundTrip(t *testing.T) {
	cfg := smallConfig()
	cfg.Proxies, cfg.RoutesPerProxy, cfg.EndpointsPerService = 30, 2, 3
	set, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := set.Write(dir); err != nil {
		t.Fatal(err)
	}
	loaded, problems, err := dirsource.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("reading the generated manifests: %s", p)
	}
	for _, group := range xdsres.Names() {
		opts := render.Options{Group: xdsres.Group(group), Translator: translator.DefaultOptions()}
		want := encode(t, set.Snapshot(), opts)
		if got := encode(t, loaded, opts); !bytes.Equal(got, want) {
			t.Errorf("%s: rendering the written manifests differs from rendering the set in memory", group)
		}
	}
}

func encode(t *testing.T, snap *objects.Snapshot, opts render.Options) []byte {
	t.Helper()
	out, err := render.Run(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := out.Encode("json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIncluded checks that Config.Included gives exactly that many
// included proxies, each included by one root, and that the set is valid.
func TestIncluded(t *testing.T) {
	cfg := smallConfig()
	cfg.Proxies, cfg.Included = 110, 10
	set, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	snap := set.Snapshot()
	roots, includes := 0, map[string]int{}
	for _, p := range snap.HTTPProxies {
		if p.Spec.VirtualHost != nil {
			roots++
		}
		for _, inc := range p.Spec.Includes {
			ns := inc.Namespace
			if ns == "" {
				ns = p.Namespace
			}
			includes[ns+"/"+inc.Name]++
		}
	}
	if roots != 100 || len(includes) != 10 {
		t.Errorf("%d roots and %d included proxies, want 100 and 10", roots, len(includes))
	}
	for k, n := range includes {
		if n != 1 {
			t.Errorf("%s included %d times", k, n)
		}
	}
	out, err := render.Run(snap, render.Options{Group: xdsres.Groups[0], Translator: translator.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range out.Statuses {
		if st.State != switchyardv1.StatusValid {
			t.Errorf("%s %s: %s", st.Key, st.State, st.Description)
		}
	}
	cfg.Included = 56
	if err := cfg.Validate(); err == nil {
		t.Error("more than half included: want an error")
	}
}
