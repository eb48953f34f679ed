package stattest

import (
	"math"
	"testing"
)

func TestUpperGammaQ(t *testing.T) {
	// Chi-square survival values from standard tables.
	cases := []struct {
		df   int
		x, p float64
	}{
		{1, 3.841, 0.05},
		{2, 5.991, 0.05},
		{3, 11.345, 0.01},
		{6, 12.592, 0.05},
		{10, 2.558, 0.99},
		{1, 0, 1},
	}
	for _, c := range cases {
		if got := upperGammaQ(float64(c.df)/2, c.x/2); math.Abs(got-c.p) > 1e-3 {
			t.Errorf("Q(df=%d, x=%g) = %g, want %g", c.df, c.x, got, c.p)
		}
	}
}

func TestChiSquare(t *testing.T) {
	_, p, err := ChiSquare(map[string]int{"a": 600, "b": 300, "c": 100}, map[string]float64{"a": .6, "b": .3, "c": .1})
	if err != nil || p < 0.99 {
		t.Errorf("exact split: p=%g err=%v", p, err)
	}
	_, p, _ = ChiSquare(map[string]int{"a": 500, "b": 400, "c": 100}, map[string]float64{"a": .6, "b": .3, "c": .1})
	if p > 1e-6 {
		t.Errorf("wrong split accepted: p=%g", p)
	}
	if _, _, err := ChiSquare(map[string]int{"a": 1, "x": 1}, map[string]float64{"a": 1, "x": 0}); err == nil {
		t.Error("an observation of probability 0 passed")
	}
}
