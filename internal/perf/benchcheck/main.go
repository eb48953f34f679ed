// Command benchcheck compares a benchmark run with a kept baseline on the
// figures that do not move with the machine's load — allocations and
// bytes allocated per operation — and fails when one grew by more than a
// tolerance. Times are printed next to them, never checked: on a shared
// machine they vary by several times from one run to the next.
//
//	benchcheck [-tolerance 10] BASELINE NEW
//
// Both files are `go test -bench -benchmem` output. A benchmark of NEW that
// BASELINE lacks is listed as new and passes; one of BASELINE that NEW
// lacks fails, so that a benchmark cannot drop out of the check unseen.
// `make bench-smoke` runs it; `make bench-baseline` writes the baseline.
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// checked are the units compared; the others are printed.
var checked = []string{"allocs/op", "B/op"}

func main() {
	tolerance := flag.Float64("tolerance", 10, "largest growth allowed, in percent")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: benchcheck [-tolerance PERCENT] BASELINE NEW")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	base, err := readFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcheck:", err)
		os.Exit(2)
	}
	cur, err := readFile(flag.Arg(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcheck:", err)
		os.Exit(2)
	}
	if problems := compare(os.Stdout, base, cur, *tolerance); len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "\nbenchcheck: %d regression(s) against %s:\n", len(problems), flag.Arg(0))
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  "+p)
		}
		fmt.Fprintln(os.Stderr, "Find the change that allocates more (go test -memprofile), or, if the growth is intended, refresh the baseline with `make bench-baseline` and commit it.")
		os.Exit(1)
	}
}

// results maps a benchmark's name to its figures by unit.
type results map[string]map[string]float64

func readFile(path string) (results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// parse reads the result lines of `go test -bench` output: a name, the
// iteration count, then value and unit pairs. A benchmark run several
// times (-count) keeps the smallest value of each unit.
func parse(r io.Reader) (results, error) {
	out := results{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := withoutProcs(f[0])
		if out[name] == nil {
			out[name] = map[string]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark %s: value %q of %s is not a number", name, f[i], f[i+1])
			}
			if old, ok := out[name][f[i+1]]; !ok || v < old {
				out[name][f[i+1]] = v
			}
		}
	}
	return out, sc.Err()
}

// withoutProcs drops the -N that go test appends to a benchmark's name
// when GOMAXPROCS is N > 1, so that a run on a machine with another number
// of cores still finds its baseline.
func withoutProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// compare prints a table of both runs and returns a line per regression.
func compare(w io.Writer, base, cur results, tolerance float64) []string {
	names := make([]string, 0, len(base)+len(cur))
	for n := range base {
		names = append(names, n)
	}
	for n := range cur {
		if base[n] == nil {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tunit\tbaseline\tnew\tchange\t")
	var problems []string
	for _, n := range names {
		b, c := base[n], cur[n]
		switch {
		case c == nil:
			problems = append(problems, fmt.Sprintf("%s: in the baseline, missing from the new run", n))
			continue
		case b == nil:
			fmt.Fprintf(tw, "%s\t(new)\t\t\t\t\n", n)
			continue
		}
		units := make([]string, 0, len(c))
		for u := range c {
			units = append(units, u)
		}
		slices.SortFunc(units, func(x, y string) int { return cmp.Or(order(x)-order(y), strings.Compare(x, y)) })
		for _, u := range units {
			old, ok := b[u]
			if !ok {
				continue
			}
			change, note := delta(old, c[u]), ""
			if slices.Contains(checked, u) {
				note = "ok"
				if change > tolerance {
					note = "REGRESSION"
					problems = append(problems, fmt.Sprintf("%s: %s %s → %s (%+.1f%%, more than %g%%)", n, u, format(old), format(c[u]), change, tolerance))
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.1f%%\t%s\n", n, u, format(old), format(c[u]), change, note)
		}
	}
	tw.Flush()
	return problems
}

// order puts the checked units first, then the rest by name.
func order(u string) int {
	if i := slices.Index(checked, u); i >= 0 {
		return i - len(checked)
	}
	return 0
}

func delta(old, cur float64) float64 {
	if old == 0 {
		if cur == 0 {
			return 0
		}
		return 100
	}
	return (cur - old) / old * 100
}

func format(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
