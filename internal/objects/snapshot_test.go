package objects

import (
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
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

// TestDelegationIndex checks that the namespace index of
// TLSCertificateDelegations follows replacements and deletions.
func TestDelegationIndex(t *testing.T) {
	s := NewSnapshot()
	del := func(ns, name, secret string) *switchyardv1.TLSCertificateDelegation {
		return &switchyardv1.TLSCertificateDelegation{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       switchyardv1.TLSCertificateDelegationSpec{Delegations: []switchyardv1.CertificateDelegation{{SecretName: secret}}},
		}
	}
	secretsIn := func(ns string) []string {
		var out []string
		for d := range s.DelegationsIn(ns) {
			out = append(out, d.Spec.Delegations[0].SecretName)
		}
		slices.Sort(out)
		return out
	}
	for _, d := range []*switchyardv1.TLSCertificateDelegation{del("a", "d1", "s1"), del("a", "d2", "s2"), del("b", "d1", "s3"), del("a", "d1", "s4")} {
		if _, err := s.Upsert(d); err != nil {
			t.Fatal(err)
		}
	}
	if got := secretsIn("a"); !slices.Equal(got, []string{"s2", "s4"}) {
		t.Fatalf("delegations in a = %v", got)
	}
	s.Delete(Key{Kind: KindTLSCertificateDelegation, Namespace: "a", Name: "d1"})
	s.Delete(Key{Kind: KindTLSCertificateDelegation, Namespace: "b", Name: "d1"})
	if got, gotB := secretsIn("a"), secretsIn("b"); !slices.Equal(got, []string{"s2"}) || gotB != nil {
		t.Fatalf("after deletes: a %v, b %v", got, gotB)
	}
	if _, ok := s.delegationsByNamespace["b"]; ok {
		t.Fatal("an emptied namespace must leave the index")
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
