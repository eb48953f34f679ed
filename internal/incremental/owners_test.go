package incremental

import (
	"fmt"
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/churn"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestOwnersAndProduced checks, after a build and after each of a sequence
// of changes, that every resource served has owners (the plain-HTTP
// listener aside), that each owner lists the resource among what it
// produced, and that clusters and load assignments are owned by the
// Services and EndpointSlices they are made from.
func TestOwnersAndProduced(t *testing.T) {
	set := testSet(t, 1)
	snap := set.Snapshot()
	e := New(snap, Config{Translator: translator.DefaultOptions()})
	if _, err := e.Update(Changes{Objects: keysOfChanges(set.Changes())}); err != nil {
		t.Fatal(err)
	}
	checkOwners(t, e, "initial build")
	m := churn.New(1, snap)
	for step := range 40 {
		changes, endpoints, all := m.Step()
		if _, err := e.Update(Changes{Objects: keysOfChanges(changes), Endpoints: endpoints, AllEndpoints: all}); err != nil {
			t.Fatal(err)
		}
		checkOwners(t, e, fmt.Sprint("step ", step))
	}
}

func checkOwners(t *testing.T, e *Engine, when string) {
	t.Helper()
	kinds := map[string]map[objects.Kind]int{}
	produced := map[objects.Key][]ResourceRef{}
	for _, g := range xdsres.Groups {
		for typ, byName := range e.Targets(g) {
			for name := range byName.All() {
				if name == translator.HTTPListenerName {
					continue
				}
				ref := ResourceRef{Group: g, Type: typ, Name: name}
				owners := e.Owners(g, typ, name)
				if len(owners) == 0 {
					t.Fatalf("%s: %v has no owner", when, ref)
				}
				if kinds[typ] == nil {
					kinds[typ] = map[objects.Kind]int{}
				}
				for _, k := range owners {
					kinds[typ][k.Kind]++
					if _, ok := produced[k]; !ok {
						produced[k] = e.Produced(k)
					}
					if !slices.Contains(produced[k], ref) {
						t.Fatalf("%s: %v is owned by %v, whose Produced does not list it: %v", when, ref, k, produced[k])
					}
				}
			}
		}
	}
	for typ, want := range map[string][]objects.Kind{
		resource.ClusterType:  {objects.KindHTTPProxy, objects.KindService},
		resource.EndpointType: {objects.KindHTTPProxy, objects.KindService, objects.KindEndpointSlice},
		resource.RouteType:    {objects.KindHTTPProxy},
		resource.SecretType:   {objects.KindHTTPProxy, objects.KindSecret},
	} {
		if kinds[typ] == nil {
			continue // nothing of the type is served at this step
		}
		for _, k := range want {
			if kinds[typ][k] == 0 {
				t.Errorf("%s: no %s is owned by a %s", when, xdsres.ShortType(typ), k)
			}
		}
	}
}
