package server

import (
	"context"
	"errors"
	"log/slog"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// DirSource serves the manifests of a directory tree, following edits.
type DirSource struct {
	Root string
	Log  *slog.Logger
	// WithoutMesh is set when the builds run without the mesh
	// (dag.Options.Mesh off): Services are then held without their
	// selectors, which only the mesh reads. Unset, everything a build may
	// read is kept.
	WithoutMesh bool

	w        *dirsource.Watcher
	problems map[string]bool
}

// Start reads the whole tree.
func (d *DirSource) Start(context.Context) ([]objects.Change, error) {
	w, err := dirsource.NewWatcher(d.Root, dirsource.Mesh(!d.WithoutMesh))
	if err != nil {
		return nil, err
	}
	d.w = w
	b := w.Initial()
	d.report(b.Problems)
	return b.Changes, nil
}

// Run follows edits until ctx is done.
func (d *DirSource) Run(ctx context.Context, emit func([]objects.Change)) error {
	if d.w == nil {
		return errors.New("DirSource.Run called before Start")
	}
	return d.w.Run(ctx, func(b dirsource.Batch) {
		d.report(b.Problems)
		emit(b.Changes)
	})
}

// report logs problems that are new since the last batch, and notes the
// ones that went away, so an edit loop shows each mistake once.
func (d *DirSource) report(ps []dirsource.Problem) {
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	now := map[string]bool{}
	for _, p := range ps {
		s := p.String()
		now[s] = true
		if d.problems[s] {
			continue
		}
		if p.Severity == dirsource.Error {
			log.Warn("manifest not loaded", "problem", s)
		} else {
			log.Info("manifest skipped", "problem", s)
		}
	}
	for s := range d.problems {
		if !now[s] {
			log.Info("manifest problem fixed", "problem", s)
		}
	}
	d.problems = now
}
