package pipeline

import (
	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Produced returns the resources an object's output is part of, as of the
// last batch (incremental.Engine.Produced); nil before the first build.
func (p *Pipeline) Produced(k objects.Key) []incremental.ResourceRef {
	if !p.built {
		return nil
	}
	return p.engine.Produced(k)
}
