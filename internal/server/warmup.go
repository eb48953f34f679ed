package server

import (
	"context"
	"fmt"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/pipeline"
)

// WarmSource is a Source that can hand over its first view in parts while
// it is still reading it: the Kubernetes source, whose informers take
// tens of seconds to list a large cluster. Run builds those parts as they
// come, without serving or reporting any of them, so that once the source
// is complete only its last part is left to build before the first
// response.
type WarmSource interface {
	Source
	// StartWarm is Start, passing batches of the first view to warm
	// (synchronously, from the goroutine that called StartWarm) as they
	// are read; it returns what is left of it. The batches and what is
	// returned together are the first view: applied in order, they bring
	// an empty snapshot to what Start would have returned.
	StartWarm(ctx context.Context, warm func([]objects.Change)) ([]objects.Change, error)
}

// start starts the source and builds its first view into the cache,
// ready to serve: whole, or, for a WarmSource, part by part as it is
// read. Nothing is served or reported before it returns, so clients and
// the status writer only ever see the complete first view, as they would
// after one build of all of it. It returns that build's result, its
// statuses complete, and the number of objects it read.
func (s *Server) start(ctx context.Context, src Source) (pipeline.Result, int, error) {
	ws, ok := src.(WarmSource)
	if !ok {
		initial, err := src.Start(ctx)
		if err != nil {
			return pipeline.Result{}, 0, fmt.Errorf("starting the source: %w", err)
		}
		res, err := s.apply(initial)
		if err != nil {
			return res, 0, fmt.Errorf("first build: %w", err)
		}
		return res, len(initial), nil
	}
	s.pipe.BeginWarmup()
	var (
		n       int
		warmErr error
	)
	rest, err := ws.StartWarm(ctx, func(b []objects.Change) {
		n += len(b)
		if _, err := s.apply(b); err != nil && warmErr == nil {
			warmErr = err
		}
	})
	if err != nil {
		return pipeline.Result{}, 0, fmt.Errorf("starting the source: %w", err)
	}
	res, err := s.apply(rest)
	if err == nil {
		err = warmErr
	}
	if err != nil {
		return res, 0, fmt.Errorf("first build: %w", err)
	}
	if err := s.pipe.EndWarmup(); err != nil {
		return res, 0, fmt.Errorf("first build: %w", err)
	}
	// The last part's update holds only what it changed; the status
	// writer, the admin endpoint and the log expect the first build's, of
	// every object.
	res.Full = true
	res.StatusUpdate = s.pipe.FullStatusUpdate()
	res.Next = s.pipe.Next()
	s.next = res.Next
	return res, n + len(rest), nil
}
