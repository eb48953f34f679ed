package pipeline

import (
	"testing"

	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
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
