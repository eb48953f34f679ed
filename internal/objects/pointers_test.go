package objects

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSharedPointersForgotten: a value no object holds any more leaves
// the table, so that the names of Nodes long gone do not stay.
func TestSharedPointersForgotten(t *testing.T) {
	name := strings.Clone("node-that-goes-away")
	if sharedString(&name) != sharedString(new(strings.Clone(name))) {
		t.Fatalf("two pointers for %q", name)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		stringPointers.mu.Lock()
		_, held := stringPointers.m[name]
		stringPointers.mu.Unlock()
		if !held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q is still in the table after its last pointer went", name)
		}
		time.Sleep(time.Millisecond) // lets the cleanup goroutine run
	}
}

// TestSharedPointersConcurrent: sources compact on every core at once
// (run with -race); every caller gets the one pointer.
func TestSharedPointersConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]*string, 8)
	for i := range got {
		wg.Go(func() { got[i] = sharedString(new(strings.Clone("zone-concurrent"))) })
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] || *p != "zone-concurrent" {
			t.Fatalf("pointers %v, want one", got)
		}
	}
	runtime.KeepAlive(got)
}
