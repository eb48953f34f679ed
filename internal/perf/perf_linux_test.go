package perf

import (
	"os"
	"syscall"
	"testing"
)

// TestReportCountsFaults holds faults/op to the pages an iteration touches
// for the first time: a fresh anonymous mapping faults on each page's first
// write, and on none after.
func TestReportCountsFaults(t *testing.T) {
	const pages = 4096
	size := pages * os.Getpagesize()
	r := testing.Benchmark(func(b *testing.B) {
		cpu := StartCPU()
		n := 0
		for b.Loop() {
			m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < size; i += os.Getpagesize() {
				m[i] = 1
			}
			if err := syscall.Munmap(m); err != nil {
				b.Fatal(err)
			}
			n++
		}
		cpu.Report(b, n)
	})
	// Transparent huge pages may back the mapping with fewer, larger pages.
	if got := r.Extra["faults/op"]; got < pages/512 || got > 2*pages {
		t.Errorf("faults/op = %v after touching %d fresh pages an iteration", got, pages)
	}
	if r.Extra["cpu-ns/op"] <= 0 {
		t.Errorf("cpu-ns/op = %v", r.Extra["cpu-ns/op"])
	}
}
