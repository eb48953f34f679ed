package pipeline

import (
	"testing"

	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// BenchmarkFirstApply is a pipeline's first batch on
// scalegen.DirectoryShape, the engine's first build and the gate's first
// pass over all of it: the gate's share of the time to first config,
// apart from the source and the server (its CPU profile tells the two).
func BenchmarkFirstApply(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run("roots="+perf.Size(n), func(b *testing.B) {
			set, err := scalegen.Generate(scalegen.DirectoryShape(n))
			if err != nil {
				b.Fatal(err)
			}
			changes := set.Changes()
			cpu := perf.StartCPU()
			i := 0
			for b.Loop() {
				i++
				p := New(xdscache.New(), Config{Translator: translator.DefaultOptions()})
				if _, err := p.Apply(changes); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report(b, i)
		})
	}
}

// BenchmarkGatePass is the gate's own work in a first pass, inspections
// aside: every resource of the 1k build comes with its inspection, as the
// engine makes them, and a new gate passes every group.
func BenchmarkGatePass(b *testing.B) {
	p := builtDirectoryShape(b, 1000)
	made := map[*xdsres.Resource]*inspection{}
	for _, g := range groups {
		for typ, byName := range p.engine.Targets(g.name) {
			for name, r := range byName.All() {
				in := inspect(r, typ, name)
				made[r] = &in
			}
		}
	}
	cpu := perf.StartCPU()
	i := 0
	for b.Loop() {
		i++
		b.StopTimer()
		gt := NewGate()
		gt.early = make(map[*xdsres.Resource]inspection, len(made))
		for r, in := range made {
			gt.early[r] = *in
		}
		b.StartTimer()
		gt.Begin()
		for _, g := range groups {
			gt.Pass(g.name, p.engine.Targets(g.name), nil, true)
		}
		gt.End()
	}
	cpu.Report(b, i)
}
