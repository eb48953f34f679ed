package main

import (
	"context"
	"os"
	"runtime/debug"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/server"
)

type plainSource struct{}

func (plainSource) Start(context.Context) ([]objects.Change, error)   { return nil, nil }
func (plainSource) Run(context.Context, func([]objects.Change)) error { return nil }

type warmSource struct {
	plainSource
	gogc int
}

func (w *warmSource) StartWarm(context.Context, func([]objects.Change)) ([]objects.Change, error) {
	w.gogc = debug.SetGCPercent(-1)
	debug.SetGCPercent(w.gogc)
	return nil, nil
}

// TestStartupGCKeepsWarmSources checks that the start-up GC target wraps
// a warm source without hiding its StartWarm, sets the target while it
// runs, and restores the previous one when Run starts.
func TestStartupGCKeepsWarmSources(t *testing.T) {
	t.Setenv("GOGC", "100") // restored when the test ends
	if ws := (&warmSource{}); withStartupGC(ws) != server.Source(ws) {
		t.Fatal("with GOGC set the source is still wrapped")
	}
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	if _, ok := withStartupGC(plainSource{}).(server.WarmSource); ok {
		t.Fatal("a plain source became a warm one")
	}
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	ws := &warmSource{}
	src, ok := withStartupGC(ws).(server.WarmSource)
	if !ok {
		t.Fatal("the wrapper hides StartWarm")
	}
	if _, err := src.StartWarm(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if ws.gogc != startupGOGC {
		t.Errorf("GOGC during StartWarm = %d, want %d", ws.gogc, startupGOGC)
	}
	if err := src.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC after Run = %d, want 100 restored", got)
	}
}
