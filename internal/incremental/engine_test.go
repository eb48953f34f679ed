package incremental

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/churn"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func testSet(t testing.TB, seed int64) *scalegen.Set {
	t.Helper()
	set, err := scalegen.Generate(scalegen.Config{
		Proxies: 40, RoutesPerProxy: 2, ServicesPerRoute: 2, EndpointsPerService: 3,
		Zones: 2, TLSFraction: 0.6, Seed: seed, TeamSize: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func keysOfChanges(changes []objects.Change) []objects.Key {
	out := make([]objects.Key, len(changes))
	for i, c := range changes {
		out[i] = c.Key
	}
	return out
}

// TestIncrementalEqualsFullBuild applies random sequences of changes and,
// after each, compares the engine with a full build of the same snapshot:
// every resource of every group byte for byte, every status, and the DAG.
func TestIncrementalEqualsFullBuild(t *testing.T) {
	seeds, steps := 6, 250
	if testing.Short() {
		seeds, steps = 2, 80
	}
	seen := map[string]int{}
	defer func() {
		// The sequences must reach what crosses units, or they prove
		// little.
		for _, want := range []string{"DuplicateFQDN", "DNSNameTaken", "IncludeCycle", "RootIncluded", "IncludeNotFound",
			"Orphaned", "SecretNotDelegated", "SecretNotFound", "AuthorizationUnavailable", "ServiceNotFound", "DuplicateRouteName",
			"ServiceExternalName", externalNameCluster,
			"RateLimitServiceUnavailable", "ratelimit filter on " + translator.HTTPListenerName, "ratelimit filter on " + translator.HTTPSListenerName,
			"FallbackNotConfigured", "FallbackWithAuthorization", "FallbackWithJWT", "FallbackSecretNotDelegated", "fallback served"} {
			if seen[want] == 0 && !t.Failed() && !testing.Short() {
				t.Errorf("no step produced %s", want)
			}
		}
	}()
	for seed := range int64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			set := testSet(t, seed)
			snap := set.Snapshot()
			opts := Config{Translator: translator.DefaultOptions()}
			if seed%3 == 2 {
				// Global authorization: every secure host reads one more
				// ExtensionService.
				opts.DAG.GlobalAuthorization = &types.NamespacedName{Namespace: "auth", Name: "authz-1"}
			}
			switch seed % 3 {
			case 1:
				// Global rate limits ask an ExtensionService that steps
				// create, break and delete; every host without a global
				// policy of its own gets the default one.
				opts.DAG.RateLimitService = &types.NamespacedName{Namespace: "auth", Name: "authz-2"}
				opts.DAG.DefaultGlobalRateLimitPolicy = &switchyardv1.GlobalRateLimitPolicy{Descriptors: []switchyardv1.RateLimitDescriptor{
					{Entries: []switchyardv1.RateLimitDescriptorEntry{{RemoteAddress: &switchyardv1.RemoteAddressDescriptor{}}}},
				}}
			case 0:
				// Without a default policy, and failing open when the
				// service is missing.
				opts.DAG.RateLimitService = &types.NamespacedName{Namespace: "auth", Name: "authz-0"}
				opts.DAG.RateLimitFailOpen = seed > 0
			}
			initial := keysOfChanges(set.Changes())
			initial = append(initial, enableFallback(snap)...)
			if seed%3 != 1 {
				opts.DAG.FallbackCertificate = &fallbackCertificate
			}
			// Services that become ExternalName: DNS-resolved clusters,
			// without load assignments, or an error on every other seed.
			opts.DAG.ExternalNameServices = seed%2 == 0
			if seed%2 == 1 {
				opts.DAG.Mesh = true
				initial = append(initial, addMesh(snap)...)
			}
			e := New(snap, opts)
			if _, err := e.Update(Changes{Objects: initial}); err != nil {
				t.Fatal(err)
			}
			compare(t, e, snap, opts, "initial build")
			known := map[objects.Key]*dag.Status{}
			followStatuses(t, known, e, "initial build")
			m := churn.New(seed, snap)
			for step := range steps {
				changes, endpoints, all := m.Step()
				if _, err := e.Update(Changes{Objects: keysOfChanges(changes), Endpoints: endpoints, AllEndpoints: all}); err != nil {
					t.Fatal(err)
				}
				if !compare(t, e, snap, opts, fmt.Sprintf("step %d (%s)", step, describe(changes))) {
					return
				}
				followStatuses(t, known, e, fmt.Sprintf("step %d", step))
				tally(seen, e.Statuses())
				tallyRateLimitFilters(seen, e)
				if e.Targets(xdsres.GroupEnvoy)[resource.RouteType].Get(translator.FallbackRouteName) != nil {
					seen["fallback served"]++
				}
				if opts.DAG.ExternalNameServices && seen[externalNameCluster] == 0 {
					tallyExternalNames(seen, e.DAG())
				}
			}
		})
	}
}

// tallyRateLimitFilters counts the listeners that carry the global rate
// limit filter, which only comes with a working rate limit service.
func tallyRateLimitFilters(seen map[string]int, e *Engine) {
	for name, r := range e.Targets(xdsres.GroupEnvoy)[resource.ListenerType].All() {
		if r != nil && bytes.Contains(r.Any.Value, []byte("envoy.filters.http.ratelimit")) {
			seen["ratelimit filter on "+name]++
		}
	}
}

// followStatuses applies the engine's last status update to known, as a
// consumer would, and checks that it then holds exactly every status: an
// update must never miss a change.
func followStatuses(t *testing.T, known map[objects.Key]*dag.Status, e *Engine, when string) {
	t.Helper()
	u := e.StatusUpdate()
	if u.All {
		clear(known)
	}
	for _, k := range u.Removed {
		delete(known, k)
	}
	for _, st := range u.Changed {
		known[st.Key] = st
	}
	all := e.Statuses()
	if len(all) != len(known) {
		t.Fatalf("%s: following the status updates gives %d statuses, the engine has %d", when, len(known), len(all))
	}
	for _, st := range all {
		if got := known[st.Key]; got == nil || !reflect.DeepEqual(got, st) {
			t.Fatalf("%s: status of %s followed from the updates is %+v, want %+v", when, st.Key, got, st)
		}
	}
}

// externalNameCluster counts the steps whose DAG has the cluster of an
// ExternalName Service, which no status tells.
const externalNameCluster = "an ExternalName cluster"

func tallyExternalNames(seen map[string]int, d *dag.DAG) {
	for _, c := range d.Clusters {
		if _, _, ok := c.Spec.ExternalName(); ok {
			seen[externalNameCluster]++
			return
		}
	}
}

func tally(seen map[string]int, sts []*dag.Status) {
	for _, st := range sts {
		if st.State == "orphaned" {
			seen["Orphaned"]++
		}
		for _, c := range append(st.Errors, st.Warnings...) {
			seen[c.Reason]++
		}
	}
}

func describe(changes []objects.Change) string {
	s := ""
	for i, c := range changes {
		if i > 0 {
			s += ", "
		}
		verb := "upsert"
		if c.Object == nil {
			verb = "delete"
		}
		s += verb + " " + c.Key.String()
	}
	return s
}

// compare reports every difference between the engine and a full build.
func compare(t *testing.T, e *Engine, snap *objects.Snapshot, cfg Config, when string) bool {
	t.Helper()
	want := Reference(snap, cfg.DAG, cfg.Translator)
	ok := true
	for _, g := range xdsres.Groups {
		got := e.Targets(g)
		for _, typ := range xdsres.TypesOf(g) {
			for name, w := range want.Targets[g][typ].All() {
				switch r := got[typ].Get(name); {
				case r == nil:
					t.Errorf("%s: %s %s %s missing", when, g, typ, name)
					ok = false
				case !bytes.Equal(r.Any.Value, w.Any.Value) || r.Version != w.Version:
					t.Errorf("%s: %s %s %s differs:\n%s", when, g, typ, name, cmp.Diff(w.Decoded(), r.Decoded(), protocmp.Transform()))
					ok = false
				}
			}
			for name := range got[typ].All() {
				if want.Targets[g][typ].Get(name) == nil {
					t.Errorf("%s: %s %s %s should not be there", when, g, typ, name)
					ok = false
				}
			}
		}
	}
	if diff := cmp.Diff(want.Statuses, e.Statuses()); diff != "" {
		t.Errorf("%s: statuses (-full +incremental):\n%s", when, diff)
		ok = false
	}
	if !reflect.DeepEqual(want.DAG, e.DAG()) {
		t.Errorf("%s: the DAG differs", when)
		ok = false
	}
	return ok
}
