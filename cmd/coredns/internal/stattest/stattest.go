// Package stattest tests observed splits against expected probabilities
// with Pearson's chi-square test, for the DNS balancer's selection tests.
package stattest

import (
	"fmt"
	"math"
)

// MinP is the p-value below which a split is rejected. A correct picker
// fails once in 10,000 runs; a wrong split over the sample sizes the tests
// use gives p-values below 1e-30.
const MinP = 1e-4

// ChiSquare returns the statistic and p-value of observed counts against
// expected probabilities, which sum to 1. Categories of probability 0 do
// not count as degrees of freedom and must not be observed.
func ChiSquare(observed map[string]int, expected map[string]float64) (stat, p float64, err error) {
	n := 0
	for k, c := range observed {
		n += c
		if expected[k] == 0 && c > 0 {
			return 0, 0, fmt.Errorf("%q observed %d times, expected never", k, c)
		}
	}
	df := -1
	for _, pk := range expected {
		if pk > 0 {
			df++
		}
	}
	for k, pk := range expected {
		if pk == 0 {
			continue
		}
		e := pk * float64(n)
		d := float64(observed[k]) - e
		stat += d * d / e
	}
	if df <= 0 {
		return 0, 1, nil
	}
	return stat, upperGammaQ(float64(df)/2, stat/2), nil
}

// upperGammaQ is the regularized upper incomplete gamma function Q(a, x),
// the chi-square survival function at 2x with 2a degrees of freedom: a
// series below a+1, a continued fraction (modified Lentz) above.
func upperGammaQ(a, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	prefix := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return 1 - sum*prefix
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return prefix * h
}
