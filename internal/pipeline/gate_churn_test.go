package pipeline

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestGateUnderChurn applies random sequences of changes, with
// EndpointSlices broken now and then (port 70000, address 10.0.0.999) and
// a translator that emits them (newUncheckedPipeline),
// and checks after each step that what the gate lets through passes
// xdscheck.CheckServed in every group. Repairing every slice at the end
// must leave nothing withheld and the gate serving exactly the build.
func TestGateUnderChurn(t *testing.T) {
	seeds, steps := 3, 80
	if testing.Short() {
		seeds, steps = 1, 30
	}
	withheld := 0
	for seed := range int64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := startChurnWith(t, seed, newUncheckedPipeline)
			p, mirror := r.p, r.mirror
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			for step := range steps {
				changes, _, _ := r.m.Step()
				if rng.IntN(3) == 0 {
					changes = append(changes, breakSlice(t, mirror, rng))
				}
				r.settle(t, changes)
				withheld += len(p.Rejected())
				checkGateServes(t, p, fmt.Sprint("step ", step))
			}
			if _, err := p.Apply(repairSlices(t, mirror)); err != nil {
				t.Fatal(err)
			}
			if rj := p.Rejected(); len(rj) > 0 {
				t.Fatalf("still withheld once every slice is repaired: %v", rj)
			}
			for _, g := range xdsres.Groups {
				for typ, byName := range p.engine.Targets(g) {
					for name, r := range byName.All() {
						if p.Served(g)[typ].Get(name) != r {
							t.Errorf("%s %s %s: the gate serves another version than the build's", g, typ, name)
						}
					}
				}
			}
		})
	}
	if withheld == 0 {
		t.Error("no step withheld anything: the test proves nothing")
	}
}

// checkGateServes checks what the gate lets through to each group.
func checkGateServes(t *testing.T, p *Pipeline, when string) {
	t.Helper()
	for _, g := range xdsres.Groups {
		var ms []proto.Message
		for _, byName := range p.Served(g) {
			for _, r := range byName.All() {
				ms = append(ms, r.Decoded())
			}
		}
		res, err := xdscheck.Collect(ms)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range xdscheck.CheckServed(g, res) {
			t.Fatalf("%s: the gate lets through to %s: %v", when, g, err)
		}
	}
}

// breakSlice replaces a random EndpointSlice of the snapshot with a copy
// no client accepts.
func breakSlice(t *testing.T, snap *objects.Snapshot, rng *rand.Rand) objects.Change {
	t.Helper()
	names := make([]types.NamespacedName, 0, len(snap.EndpointSlices))
	for nn := range snap.EndpointSlices {
		names = append(names, nn)
	}
	slices.SortFunc(names, compareNN)
	es := snap.EndpointSlices[names[rng.IntN(len(names))]].Kubernetes()
	if rng.IntN(2) == 0 && len(es.Ports) > 0 {
		es.Ports[0].Port = ptr[int32](70000)
	} else if len(es.Endpoints) > 0 {
		es.Endpoints[0].Addresses = []string{"10.0.0.999"}
	}
	return upsertInto(t, snap, es)
}

// repairSlices fixes every slice breakSlice broke.
func repairSlices(t *testing.T, snap *objects.Snapshot) []objects.Change {
	t.Helper()
	var out []objects.Change
	for _, es := range snap.EndpointSlices {
		fixed, changed := es.Kubernetes(), false
		for i, port := range fixed.Ports {
			if port.Port != nil && *port.Port > 65535 {
				fixed.Ports[i].Port, changed = ptr[int32](8080), true
			}
		}
		for i, ep := range fixed.Endpoints {
			for j, a := range ep.Addresses {
				if _, err := netip.ParseAddr(a); err != nil && fixed.AddressType != discoveryv1.AddressTypeFQDN {
					fixed.Endpoints[i].Addresses[j], changed = "10.9.9.9", true
				}
			}
		}
		if changed {
			out = append(out, upsertInto(t, snap, fixed))
		}
	}
	return out
}

func upsertInto(t *testing.T, snap *objects.Snapshot, es *discoveryv1.EndpointSlice) objects.Change {
	t.Helper()
	k, err := snap.Upsert(es)
	if err != nil {
		t.Fatal(err)
	}
	return objects.Change{Key: k, Object: es}
}

func compareNN(a, b types.NamespacedName) int {
	if a.Namespace != b.Namespace {
		if a.Namespace < b.Namespace {
			return -1
		}
		return 1
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}
