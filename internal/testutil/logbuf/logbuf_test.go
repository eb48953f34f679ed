package logbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestBufferConcurrent writes from many goroutines while reading: under
// -race this fails if Buffer is not safe for that, and every line must
// arrive whole.
func TestBufferConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				fmt.Fprintf(&b, "writer %d line %d\n", i, j)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
	b.Reset()
	if b.String() != "" {
		t.Fatal("Reset left something")
	}
}
