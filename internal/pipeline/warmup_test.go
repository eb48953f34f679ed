package pipeline

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// TestWarmupServesWhatOneBuildServes applies a first view in parts during
// a warm-up and compares what is then served, and the statuses, with one
// build of the whole view: staging must not hold back a route that moved
// to a new cluster between two parts, and the gate must not keep a version
// from an earlier part of a resource that the final view makes invalid.
func TestWarmupServesWhatOneBuildServes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		new     func(*clock) (*Pipeline, *xdscache.Cache)
		batches [][]objects.Change
	}{{
		name: "a route moves to a new cluster",
		new:  newPipeline,
		batches: [][]objects.Change{
			upserts(t, svc("a"), slice("a", "10.0.0.1"), proxyTo("app", "app.example.com", "a")),
			upserts(t, svc("b"), slice("b", "10.0.0.2"), proxyTo("app", "app.example.com", "b")),
		},
	}, {
		name: "a load assignment turns bad",
		new:  newUncheckedPipeline,
		batches: [][]objects.Change{
			upserts(t, svc("a"), svc("c"), slice("a", "10.0.0.1"), slice("c", "10.0.0.3"),
				proxyTo("app", "app.example.com", "a"), proxyTo("other", "other.example.com", "c")),
			upserts(t, slicePort("a", "10.0.0.1", 70000)),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			warm, warmCache := tc.new(c)
			warm.BeginWarmup()
			for _, b := range tc.batches {
				if _, err := warm.Apply(b); err != nil {
					t.Fatal(err)
				}
			}
			if err := warm.EndWarmup(); err != nil {
				t.Fatal(err)
			}
			if next := warm.Next(); !next.IsZero() {
				t.Errorf("a stage is due at %v after the warm-up: nothing must be half-staged", next)
			}

			ref, refCache := tc.new(c)
			res, err := ref.Apply(merged(tc.batches))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(versions(refCache), versions(warmCache)); d != "" {
				t.Errorf("served after the warm-up (+) and after one build (-) differ:\n%s", d)
			}
			if d := cmp.Diff(statusLines(res.StatusUpdate), statusLines(warm.FullStatusUpdate())); d != "" {
				t.Errorf("statuses after the warm-up (+) and after one build (-) differ:\n%s", d)
			}
			if d := cmp.Diff(len(ref.Rejected()), len(warm.Rejected())); d != "" {
				t.Errorf("withheld resources differ: %s", d)
			}
		})
	}
}

// merged is the batches as one, the last change of each object kept.
func merged(batches [][]objects.Change) []objects.Change {
	var out []objects.Change
	at := map[objects.Key]int{}
	for _, b := range batches {
		for _, c := range b {
			if i, ok := at[c.Key]; ok {
				out[i] = c
				continue
			}
			at[c.Key] = len(out)
			out = append(out, c)
		}
	}
	return out
}

func statusLines(u dag.StatusUpdate) map[string]string {
	out := map[string]string{"all": fmt.Sprint(u.All)}
	for _, st := range u.Changed {
		out[st.Key.String()] = fmt.Sprintf("%s: %s %v %v", st.State, st.Description, st.Errors, st.Warnings)
	}
	return out
}
