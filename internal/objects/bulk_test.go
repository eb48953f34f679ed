package objects

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// TestSnapshotOfIsUpsert checks that the bulk constructor yields what Upsert
// of the same objects in order does, indexes included, when a later
// definition replaces an earlier one and moves a slice between Services.
func TestSnapshotOfIsUpsert(t *testing.T) {
	objs := mixedObjects()
	want := NewSnapshot()
	for _, obj := range objs {
		if _, err := want.Upsert(obj); err != nil {
			t.Fatal(err)
		}
	}
	got, err := SnapshotOf(objs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SnapshotOf differs from Upsert:\n got %+v\nwant %+v", got, want)
	}
	empty, err := SnapshotOf(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(empty, NewSnapshot()) {
		t.Fatalf("SnapshotOf(nil) = %+v, want the empty snapshot with every map made", empty)
	}
}

// nsMeta is the metadata of an object named name in namespace ns.
func nsMeta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// mixedObjects are objects of most kinds, in an order where later
// definitions replace earlier ones: a slice moves between Services, a
// delegation is defined twice.
func mixedObjects() []runtime.Object {
	return []runtime.Object{
		slice("a-1", "a"), slice("a-2", "a"), slice("b-1", "b"),
		slice("a-2", "b"), // replaces the earlier a-2, which leaves a
		&corev1.Service{ObjectMeta: nsMeta("ns", "a")},
		&corev1.Secret{ObjectMeta: nsMeta("ns", "s")},
		&corev1.Node{ObjectMeta: nsMeta("", "n")},
		&corev1.Namespace{ObjectMeta: nsMeta("", "ns")},
		&switchyardv1.HTTPProxy{ObjectMeta: nsMeta("ns", "p")},
		&switchyardv1.TLSCertificateDelegation{ObjectMeta: nsMeta("ns", "d")},
		&switchyardv1.TLSCertificateDelegation{ObjectMeta: nsMeta("other", "d")},
		&switchyardv1.TLSCertificateDelegation{ObjectMeta: nsMeta("ns", "d"), Spec: switchyardv1.TLSCertificateDelegationSpec{
			Delegations: []switchyardv1.CertificateDelegation{{SecretName: "s"}},
		}},
	}
}

// TestSnapshotOfUnsupported checks that an unsupported type is an error that
// names it, not a snapshot without it.
func TestSnapshotOfUnsupported(t *testing.T) {
	_, err := SnapshotOf([]runtime.Object{&corev1.Service{}, &corev1.ConfigMap{}})
	if err == nil || !strings.Contains(err.Error(), "ConfigMap") {
		t.Fatalf("err = %v, want one naming ConfigMap", err)
	}
}

// BenchmarkSnapshotOf compares the bulk constructor with one Upsert per
// object, on the kinds and numbers of a directory of 10,000 proxies.
func BenchmarkSnapshotOf(b *testing.B) {
	var objs []runtime.Object
	for i := range 36000 {
		ns, name := "team-"+strconv.Itoa(i%100), "o-"+strconv.Itoa(i)
		objs = append(objs,
			&switchyardv1.HTTPProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-1",
				Labels: map[string]string{ServiceNameLabel: name}}},
		)
	}
	b.Run("Upsert", func(b *testing.B) {
		for b.Loop() {
			s := NewSnapshot()
			for _, obj := range objs {
				_, _ = s.Upsert(obj)
			}
		}
	})
	b.Run("SnapshotOf", func(b *testing.B) {
		for b.Loop() {
			_, _ = SnapshotOf(objs)
		}
	})
}
