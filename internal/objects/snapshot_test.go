package objects

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func slice(name, svc string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{ServiceNameLabel: svc}}}
}

// TestSliceIndex checks that the Service index follows a slice that moves
// between Services and goes away.
func TestSliceIndex(t *testing.T) {
	s := NewSnapshot()
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	for _, es := range []*discoveryv1.EndpointSlice{slice("a-2", "a"), slice("a-1", "a"), slice("b-1", "b")} {
		if _, err := s.Upsert(es); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.SlicesFor(a); len(got) != 2 || got[0].Name != "a-1" {
		t.Fatalf("slices of a = %v", got)
	}
	if _, err := s.Upsert(slice("a-2", "b")); err != nil {
		t.Fatal(err)
	}
	if got, gotB := s.SlicesFor(a), s.SlicesFor(b); len(got) != 1 || len(gotB) != 2 {
		t.Fatalf("after moving a-2 to b: a %d, b %d", len(got), len(gotB))
	}
	s.Delete(Key{Kind: KindEndpointSlice, Namespace: "ns", Name: "a-1"})
	if got := s.SlicesFor(a); got != nil {
		t.Fatalf("a should have no slices, got %v", got)
	}
	if s.Get(Key{Kind: KindEndpointSlice, Namespace: "ns", Name: "a-1"}) != nil {
		t.Fatal("Get of a deleted object must be nil")
	}
}

func TestKindNames(t *testing.T) {
	for k := KindHTTPProxy; k <= KindNode; k++ {
		back, ok := KindFromString(k.String())
		if !ok || back != k {
			t.Errorf("%v does not round-trip", k)
		}
	}
}
