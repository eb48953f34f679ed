package main

import (
	"io"
	"strings"
	"testing"
)

const baseline = `goos: linux
BenchmarkFullBuild/proxies=1k-2    	      20	  52000000 ns/op	  97000000 cpu-ns/op	 304.0 allocs/proxy	 60000000 B/op	  304000 allocs/op
BenchmarkOneProxyChanged/proxies=1k-2	     200	    140000 ns/op	     50000 B/op	     600 allocs/op
BenchmarkOneProxyChanged/proxies=1k-2	     200	    150000 ns/op	     51000 B/op	     590 allocs/op
PASS
`

func TestCompare(t *testing.T) {
	base, err := parse(strings.NewReader(baseline))
	if err != nil {
		t.Fatal(err)
	}
	if got := base["BenchmarkOneProxyChanged/proxies=1k"]["allocs/op"]; got != 590 {
		t.Errorf("a benchmark run twice keeps its smallest figure: allocs/op %v, want 590", got)
	}
	for _, tc := range []struct {
		name, run string
		problems  []string
	}{{
		name: "times may double, allocations stay within the tolerance",
		run: `BenchmarkFullBuild/proxies=1k-2 20 152000000 ns/op 303.0 allocs/proxy 65000000 B/op 330000 allocs/op
BenchmarkOneProxyChanged/proxies=1k-2 200 940000 ns/op 50000 B/op 600 allocs/op`,
	}, {
		name: "allocations grow by more than the tolerance",
		run: `BenchmarkFullBuild/proxies=1k-2 20 52000000 ns/op 70000000 B/op 304000 allocs/op
BenchmarkOneProxyChanged/proxies=1k-2 200 140000 ns/op 50000 B/op 700 allocs/op`,
		problems: []string{
			"BenchmarkFullBuild/proxies=1k: B/op 6e+07 → 7e+07 (+16.7%, more than 10%)",
			"BenchmarkOneProxyChanged/proxies=1k: allocs/op 590 → 700 (+18.6%, more than 10%)",
		},
	}, {
		name: "a machine with another number of cores finds its baseline",
		run: `BenchmarkFullBuild/proxies=1k-8 20 52000000 ns/op 60000000 B/op 304000 allocs/op
BenchmarkOneProxyChanged/proxies=1k 200 140000 ns/op 50000 B/op 590 allocs/op`,
	}, {
		name: "a benchmark drops out of the run",
		run:  `BenchmarkFullBuild/proxies=1k-2 20 52000000 ns/op 60000000 B/op 304000 allocs/op`,
		problems: []string{
			"BenchmarkOneProxyChanged/proxies=1k: in the baseline, missing from the new run",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cur, err := parse(strings.NewReader(tc.run))
			if err != nil {
				t.Fatal(err)
			}
			got := compare(io.Discard, base, cur, 10)
			if strings.Join(got, "\n") != strings.Join(tc.problems, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.problems, "\n"))
			}
		})
	}
}
