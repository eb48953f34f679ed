package objects

import "testing"

// TestKeyCompare checks that keys order by kind first, then namespace, then
// name, and that Less agrees with Compare.
func TestKeyCompare(t *testing.T) {
	ordered := []Key{
		{KindHTTPProxy, "b", "a"},
		{KindService, "a", "z"},
		{KindService, "b", "a"},
		{KindService, "b", "b"},
		{KindNode, "", "a"},
	}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
			if got := a.Less(b); got != (i < j) {
				t.Errorf("%v.Less(%v) = %v, want %v", a, b, got, i < j)
			}
		}
	}
}
