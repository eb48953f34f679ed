package objects

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestApplyAllIsApply checks that ApplyAll gives the snapshot that Apply
// of each change in order does: on an empty snapshot with upserts alone
// (the bulk fill), with a deletion among them, and on a snapshot that
// holds something already.
func TestApplyAllIsApply(t *testing.T) {
	upserts := func(objs ...runtime.Object) []Change {
		out := make([]Change, len(objs))
		for i, o := range objs {
			k, err := KeyOf(o)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = Change{Key: k, Object: o}
		}
		return out
	}
	batch := upserts(mixedObjects()...)
	withDelete := append(append([]Change{}, batch...), Change{Key: batch[0].Key})
	cases := map[string]struct {
		before, changes []Change
	}{
		"upserts on an empty snapshot": {changes: batch},
		"a deletion among them":        {changes: withDelete},
		"a snapshot holding something": {before: upserts(&corev1.Service{ObjectMeta: nsMeta("ns", "held")}), changes: batch},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			want, got := NewSnapshot(), NewSnapshot()
			for _, s := range []*Snapshot{want, got} {
				for _, ch := range c.before {
					if err := s.Apply(ch); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, ch := range c.changes {
				if err := want.Apply(ch); err != nil {
					t.Fatal(err)
				}
			}
			if err := got.ApplyAll(c.changes); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ApplyAll differs from Apply one by one:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestEmptySeesEveryKind puts an entry in each of the snapshot's maps of
// objects in turn and requires empty to see it: a kind added to Snapshot
// but not to empty would let ApplyAll's bulk fill drop what it holds.
func TestEmptySeesEveryKind(t *testing.T) {
	if !NewSnapshot().empty() {
		t.Fatal("a new snapshot is not empty")
	}
	typ := reflect.TypeFor[Snapshot]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Map {
			continue
		}
		s := NewSnapshot()
		m := reflect.ValueOf(s).Elem().Field(i)
		m.SetMapIndex(reflect.New(f.Type.Key()).Elem(), reflect.New(f.Type.Elem()).Elem())
		if s.empty() {
			t.Errorf("a snapshot with an entry in %s is empty", f.Name)
		}
	}
}
