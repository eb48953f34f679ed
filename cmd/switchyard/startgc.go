package main

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/server"
)

// startupGOGC is the garbage collector's target while serve reads its
// source and makes the first build. Reading thousands of manifests
// allocates many times the live heap in short-lived garbage, and at the
// default of 100 the collector runs so often that it takes a large share
// of the time to the first config; 400 lets the heap grow to five times
// what is live for those few seconds instead of two. Once the first build
// is served the default (or the GOGC the user set) applies again, so the
// steady state is unchanged. GOGC in the environment disables this, and
// GOMEMLIMIT, when set, still bounds the heap throughout (site/performance.md).
const startupGOGC = 400

// startupGC wraps a source so that Start (the full read and, after it, the
// first build) runs with startupGOGC, and Run, which the server calls once
// the first build is served, restores the previous target.
type startupGC struct {
	server.Source
	prev int
	on   bool
}

func withStartupGC(src server.Source) server.Source {
	if _, set := os.LookupEnv("GOGC"); set {
		return src
	}
	g := &startupGC{Source: src}
	// A source that builds its first view while it reads (Kubernetes)
	// must stay one: hiding StartWarm would turn its warm-up back into one
	// build after the informers sync.
	if ws, ok := src.(server.WarmSource); ok {
		return &startupGCWarm{startupGC: g, warm: ws}
	}
	return g
}

func (g *startupGC) Start(ctx context.Context) ([]objects.Change, error) {
	g.prev, g.on = debug.SetGCPercent(startupGOGC), true
	return g.Source.Start(ctx)
}

// startupGCWarm is startupGC for a WarmSource.
type startupGCWarm struct {
	*startupGC
	warm server.WarmSource
}

func (g *startupGCWarm) StartWarm(ctx context.Context, warm func([]objects.Change)) ([]objects.Change, error) {
	g.prev, g.on = debug.SetGCPercent(startupGOGC), true
	return g.warm.StartWarm(ctx, warm)
}

func (g *startupGC) Run(ctx context.Context, emit func([]objects.Change)) error {
	if g.on {
		debug.SetGCPercent(g.prev)
		g.on = false
	}
	return g.Source.Run(ctx, emit)
}

// oneShotGC sets startupGOGC for the whole of a command that reads a
// source, builds once and exits (render), unless GOGC is set: all of its
// run is what serve's start is.
func oneShotGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(startupGOGC)
	}
}
