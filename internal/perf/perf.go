// Package perf holds what Switchyard's benchmarks share: the process's CPU
// time (wall time is misleading on a busy machine), latency percentiles,
// the live heap, and the gate that keeps the largest sizes out of a plain
// `go test -bench .`.
package perf

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CPUTime returns the user and system CPU time the process has used.
func CPUTime() time.Duration {
	cpu, _ := usage()
	return cpu
}

// usage returns the process's CPU time and its minor page faults: the
// pages it touched for the first time, or again after the runtime gave
// them back to the kernel. On a virtual machine a fault can cost several
// microseconds, so a benchmark that grows the heap pays for it in CPU time
// that no profile of its own code shows.
func usage() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt
}

// LargeGate is the word a -bench pattern must contain for the largest
// benchmarks to run: `make bench` passes it, CI and a plain
// `go test -bench .` do not.
const LargeGate = "Large"

// RequireLarge skips a large benchmark unless the -bench pattern asks for
// it by name.
func RequireLarge(b *testing.B) {
	b.Helper()
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), LargeGate) {
		b.Skipf("a large benchmark: run it with -bench '%s'", LargeGate)
	}
}

// Latencies collects one duration per operation.
type Latencies []time.Duration

// Percentile returns the p-th percentile (0 < p <= 100), nearest rank.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Report reports the 50th and 99th percentiles in milliseconds, under the
// given prefix ("p50-ms", "p99-ms" without one).
func (l Latencies) Report(b *testing.B, prefix string) {
	b.Helper()
	if len(l) == 0 {
		return
	}
	if prefix != "" {
		prefix += "-"
	}
	b.ReportMetric(ms(l.Percentile(50)), prefix+"p50-ms")
	b.ReportMetric(ms(l.Percentile(99)), prefix+"p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// CPU measures the CPU time and the page faults of a benchmark loop: call
// Start before it and Report after it with the number of iterations.
type CPU struct {
	start  time.Duration
	faults int64
}

// StartCPU starts measuring.
func StartCPU() CPU {
	cpu, faults := usage()
	return CPU{start: cpu, faults: faults}
}

// Report reports the CPU time per iteration, which includes the garbage
// collector's work on other cores, and the minor page faults per
// iteration (faults/op), which tell a run that reused the heap from one
// that had to grow it.
func (c CPU) Report(b *testing.B, n int) {
	b.Helper()
	if n > 0 {
		cpu, faults := usage()
		b.ReportMetric(float64(cpu-c.start)/float64(n), "cpu-ns/op")
		b.ReportMetric(float64(faults-c.faults)/float64(n), "faults/op")
	}
}

// LiveHeap collects garbage and returns the bytes of live heap objects.
func LiveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// HeapProfileEnv names a file a benchmark writes a heap profile to at the
// point it measures its live heap: go test's -memprofile is written after
// the benchmark, when what it measured is already garbage.
const HeapProfileEnv = "SWITCHYARD_BENCH_HEAPPROFILE"

// WriteHeapProfile writes the heap profile to the file HeapProfileEnv
// names, if it names one. Set -memprofilerate too, or the profile samples
// one allocation in 512 KiB.
func WriteHeapProfile(b *testing.B) {
	b.Helper()
	path := os.Getenv(HeapProfileEnv)
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// Size names a benchmark size: 1000 is "1k".
func Size(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
