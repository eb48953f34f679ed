package dirsource

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/perf"
)

// benchDirEnv names a directory written by `switchyard gen` for the
// directory benchmarks; `make bench` writes the shape of
// site/performance.md there. Without it they skip: generating and writing
// thousands of manifests takes longer than reading them. The benchmarks
// are named after the directory (BenchmarkLoad/roots-10000), so that runs
// at several sizes compare apart.
const benchDirEnv = "SWITCHYARD_BENCH_DIR"

func benchDir(b *testing.B) string {
	b.Helper()
	dir := os.Getenv(benchDirEnv)
	if dir == "" {
		b.Skipf("%s is not set: point it at a directory written by `switchyard gen`", benchDirEnv)
	}
	return dir
}

// BenchmarkLoad reads the directory of SWITCHYARD_BENCH_DIR into a
// snapshot, as serve and render do before their first build. It reports
// the CPU time too (wall time is inflated on a busy machine), the
// proxies, Services, EndpointSlices and Secrets read, and the live heap
// that one snapshot holds.
func BenchmarkLoad(b *testing.B) {
	dir := benchDir(b)
	b.Run(filepath.Base(dir), func(b *testing.B) { benchLoad(b, dir) })
}

func benchLoad(b *testing.B, dir string) {
	cpu := perf.StartCPU()
	n, objs := 0, 0
	var snap *objects.Snapshot
	for b.Loop() {
		var problems []Problem
		var err error
		snap, problems, err = Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		if len(problems) > 0 {
			b.Fatalf("%d problems, the first: %s", len(problems), problems[0])
		}
		objs = len(snap.HTTPProxies) + len(snap.Services) + len(snap.EndpointSlices) + len(snap.Secrets)
		n++
	}
	cpu.Report(b, n)
	b.ReportMetric(float64(objs), "objects")
	snap = nil // not read again: what is live now is the baseline
	base := perf.LiveHeap()
	snap, _, _ = Load(dir)
	b.ReportMetric(float64(perf.LiveHeap()-base)/(1<<20), "snapshot-MiB")
	runtime.KeepAlive(snap)
}

// BenchmarkYAMLFloor parses the same files as BenchmarkLoad into yaml.v3
// nodes and nothing else, on as many cores: the floor that a YAML decoder
// cannot beat, which Load is measured against.
func BenchmarkYAMLFloor(b *testing.B) {
	dir := benchDir(b)
	b.Run(filepath.Base(dir), func(b *testing.B) { benchFloor(b, dir) })
}

func benchFloor(b *testing.B, dir string) {
	benchDocs(b, dir, func() func(doc []byte) bool {
		return func(doc []byte) bool {
			var n yamlv3.Node
			if err := yamlv3.Unmarshal(doc, &n); err != nil {
				b.Error(err)
			}
			return true
		}
	})
}

// BenchmarkFastScan writes the JSON of the same documents with the fast
// path alone, on as many cores, for a figure against BenchmarkYAMLFloor;
// it also reports how many documents the fast path declined.
func BenchmarkFastScan(b *testing.B) {
	dir := benchDir(b)
	b.Run(filepath.Base(dir), func(b *testing.B) {
		benchDocs(b, dir, func() func(doc []byte) bool {
			var s fastScanner
			var buf []byte
			return func(doc []byte) bool {
				d, ok := s.fastJSON(doc, buf)
				buf = d.data
				return ok
			}
		})
	})
}

// benchDocs runs parse (one per worker, made by newParse) over every
// document of the directory's files on every core.
func benchDocs(b *testing.B, dir string, newParse func() func(doc []byte) bool) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no manifests in %s (%v)", dir, err)
	}
	data := make([][]byte, len(files))
	size := 0
	for i, f := range files {
		if data[i], err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
		size += len(data[i])
	}
	b.SetBytes(int64(size))
	cpu := perf.StartCPU()
	n, declined := 0, 0
	for b.Loop() {
		declined = parseAll(data, newParse)
		n++
	}
	cpu.Report(b, n)
	b.ReportMetric(float64(declined), "declined")
}

// parseAll parses every document on every core and returns how many parse
// refused.
func parseAll(data [][]byte, newParse func() func(doc []byte) bool) int {
	work := make(chan []byte)
	var wg sync.WaitGroup
	var refused atomic.Int64
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parse := newParse()
			for d := range work {
				for _, doc := range splitDocuments(d) {
					if !parse(doc.data) {
						refused.Add(1)
					}
				}
			}
		}()
	}
	for _, d := range data {
		work <- d
	}
	close(work)
	wg.Wait()
	return int(refused.Load())
}

// BenchmarkRescan compares the directory of SWITCHYARD_BENCH_DIR, unchanged,
// with what a Watcher read of it: the full rescan Run starts with, right
// when serve answers its first requests, and the one an overflow of the
// kernel's event queue forces.
func BenchmarkRescan(b *testing.B) {
	dir := benchDir(b)
	b.Run(filepath.Base(dir), func(b *testing.B) {
		w, err := NewWatcher(dir)
		if err != nil {
			b.Fatal(err)
		}
		watchFor(b, w)
		cpu := perf.StartCPU()
		n := 0
		for b.Loop() {
			w.rescan()
			w.flush(func(bt Batch) { b.Fatalf("a rescan of an unchanged tree emitted %d changes", len(bt.Changes)) })
			n++
		}
		cpu.Report(b, n)
	})
}
