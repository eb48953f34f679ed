package incremental

import (
	"runtime"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// minParallel is the number of items below which a phase runs on one
// goroutine: spreading a handful of units costs more than it saves.
const minParallel = 32

// forEach calls fn for every i in [0, n), on every core when n is large
// enough. fn may read the engine and the snapshot, and write only what
// item i owns; worker identifies the goroutine (0 to workers()-1) for
// per-worker state.
func forEach(n int, fn func(worker, i int)) {
	w := workers()
	if n < minParallel || w < 2 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for worker := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(worker, i)
			}
		}()
	}
	wg.Wait()
}

func workers() int { return runtime.GOMAXPROCS(0) }

// encoded is a resource encoded by a parallel phase, or why it could not
// be.
type encoded struct {
	res *xdsres.Resource
	err error
}

// encode makes a compact resource: clients are sent the encoding, and
// keeping the decoded message too would take most of the heap.
func encode(m proto.Message) encoded {
	r, err := xdsres.Encode(m)
	return encoded{r, err}
}

// InspectFunc is what Config.Inspect holds: it is called with each
// resource r and the message m it was encoded from.
type InspectFunc func(m proto.Message, r *xdsres.Resource)

// encodeInspected is encode followed by Config.Inspect, when set.
func encodeInspected(m proto.Message, inspect InspectFunc) encoded {
	enc := encode(m)
	if inspect != nil && enc.res != nil {
		inspect(m, enc.res)
	}
	return enc
}

// encode is encode followed by the engine's Config.Inspect in the first
// update.
func (e *Engine) encode(m proto.Message) encoded { return encodeInspected(m, e.inspect()) }

// inspect is Config.Inspect in the first update, nil in later ones: the
// first makes every resource new, and the gate would decode them all;
// a later one encodes again much that has not changed, which the gate,
// inspecting only what changed, never looks at.
func (e *Engine) inspect() InspectFunc {
	if e.u == nil || !e.u.initial {
		return nil
	}
	return e.cfg.Inspect
}

// keep records an encoding error for Update to return and returns the
// resource (nil when it failed: the resource is left out).
func (e *Engine) keep(enc encoded) *xdsres.Resource {
	if enc.err != nil && e.u.err == nil {
		e.u.err = enc.err
	}
	return enc.res
}
