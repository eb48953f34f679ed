package render

import (
	"runtime"
	"sync"
)

// batch is how many resources one worker prints at a time: enough to make
// handing out work cheap, few enough to keep both cores busy to the end.
const batch = 32

// inOrder calls encode for 0..n-1 on every core and write with each result
// in index order, as soon as it and all before it are done; only a few
// batches per worker are held at once, so the output is streamed. The
// first error stops it.
func inOrder(n int, encode func(i int) ([]byte, error), write func(i int, b []byte) error) error {
	batches := (n + batch - 1) / batch
	workers := min(runtime.GOMAXPROCS(0), batches)
	if workers <= 1 {
		for i := range n {
			b, err := encode(i)
			if err != nil {
				return err
			}
			if err := write(i, b); err != nil {
				return err
			}
		}
		return nil
	}
	type result struct {
		out [][]byte
		err error
	}
	results := make([]chan result, batches)
	for i := range results {
		results[i] = make(chan result, 1)
	}
	next := make(chan int)
	done := make(chan struct{})
	window := make(chan struct{}, 4*workers)
	go func() {
		defer close(next)
		for b := range batches {
			select {
			case window <- struct{}{}:
			case <-done:
				return
			}
			select {
			case next <- b:
			case <-done:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range next {
				var r result
				for i := b * batch; i < min(n, (b+1)*batch) && r.err == nil; i++ {
					var out []byte
					out, r.err = encode(i)
					r.out = append(r.out, out)
				}
				results[b] <- r
			}
		})
	}
	defer wg.Wait()
	defer close(done)
	for b := range batches {
		r := <-results[b]
		<-window
		if r.err != nil {
			return r.err
		}
		for j, out := range r.out {
			if err := write(b*batch+j, out); err != nil {
				return err
			}
		}
	}
	return nil
}
