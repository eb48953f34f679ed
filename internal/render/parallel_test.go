package render

import (
	"errors"
	"strconv"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestInOrder: results come back in index order whatever order the
// workers finish in, and the first error, from either side, stops it.
func TestInOrder(t *testing.T) {
	const n = 1000
	var got []int
	err := inOrder(n, func(i int) ([]byte, error) { return strconv.AppendInt(nil, int64(i), 10), nil }, func(i int, b []byte) error {
		if string(b) != strconv.Itoa(i) {
			t.Fatalf("result %d is %q", i, b)
		}
		got = append(got, i)
		return nil
	})
	if err != nil || len(got) != n {
		t.Fatalf("%d results, error %v", len(got), err)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("result %d written at %d", v, i)
		}
	}
	bad := errors.New("bad")
	written := 0
	err = inOrder(n, func(i int) ([]byte, error) {
		if i == 500 {
			return nil, bad
		}
		return nil, nil
	}, func(int, []byte) error { written++; return nil })
	if !errors.Is(err, bad) || written >= 500 {
		t.Fatalf("encode error: %v after %d written", err, written)
	}
	err = inOrder(n, func(int) ([]byte, error) { return nil, nil }, func(i int, _ []byte) error {
		if i == 10 {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) {
		t.Fatalf("write error: %v", err)
	}
}

// TestSizedBuffer: a resource larger than a flush gets a buffer of
// jsonPerWireByte times its encoding at once; a small one the pool's.
func TestSizedBuffer(t *testing.T) {
	free := newBuffers()
	free.put(make([]byte, 0, 512))
	small := xdsres.NewCompactResource("small", "type.googleapis.com/x", make([]byte, 100))
	if b := free.sized(item{res: small}); cap(b) != 512 {
		t.Errorf("a small resource got a buffer of %d bytes, not the pool's 512", cap(b))
	}
	free.put(make([]byte, 0, 512))
	large := xdsres.NewCompactResource("large", "type.googleapis.com/x", make([]byte, flushAt))
	if b := free.sized(item{res: large}); cap(b) < jsonPerWireByte*flushAt {
		t.Errorf("a resource of %d bytes got a buffer of %d, not %d", flushAt, cap(b), jsonPerWireByte*flushAt)
	}
	if b := free.get(); cap(b) != 512 {
		t.Errorf("the pool's buffer was not kept: got %d bytes", cap(b))
	}
}
