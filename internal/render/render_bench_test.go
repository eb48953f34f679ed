package render_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// BenchmarkRender runs what `switchyard render` does on the directory of
// SWITCHYARD_BENCH_DIR (written by `switchyard gen`), output discarded:
// all of it (read, build, print) per format, then the build and the
// printing alone. It reports the CPU time too, which a busy machine does
// not inflate, and the size of the output.
func BenchmarkRender(b *testing.B) {
	dir := os.Getenv("SWITCHYARD_BENCH_DIR")
	if dir == "" {
		b.Skip("SWITCHYARD_BENCH_DIR is not set: point it at a directory written by `switchyard gen`")
	}
	b.Run(filepath.Base(dir), func(b *testing.B) {
		for _, format := range []string{"json", "yaml"} {
			b.Run("all/"+format, func(b *testing.B) {
				loop(b, func() int64 { return encode(b, run(b, load(b, dir)), format) })
			})
		}
		// Each part reads what it starts from itself, so that a -bench
		// pattern that selects one part does not pay for the others.
		b.Run("build", func(b *testing.B) {
			snap := load(b, dir)
			loop(b, func() int64 { run(b, snap); return 0 })
		})
		for _, format := range []string{"json", "yaml"} {
			b.Run("print/"+format, func(b *testing.B) {
				out := run(b, load(b, dir))
				loop(b, func() int64 { return encode(b, out, format) })
			})
		}
	})
}

func loop(b *testing.B, fn func() int64) {
	cpu := perf.StartCPU()
	n := 0
	var size int64
	for b.Loop() {
		size = fn()
		n++
	}
	cpu.Report(b, n)
	if size > 0 {
		b.ReportMetric(float64(size)/(1<<20), "output-MiB")
	}
}

func load(b *testing.B, dir string) *objects.Snapshot {
	snap, _, err := dirsource.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

func run(b *testing.B, snap *objects.Snapshot) *render.Output {
	out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: xdsres.GroupEnvoy, Encoded: true})
	if err != nil {
		b.Fatal(err)
	}
	out.NoDataPlane()
	return out
}

// counter counts what is written to it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func encode(b *testing.B, out *render.Output, format string) int64 {
	var c counter
	if err := out.EncodeTo(io.Writer(&c), format, render.EncodeOptions{}); err != nil {
		b.Fatal(err)
	}
	return c.n
}
