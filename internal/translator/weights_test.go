package translator

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLocalityWeights(t *testing.T) {
	tests := map[string]struct {
		weights []uint32
		healthy [][]int
		want    [][]uint32
	}{
		"one endpoint": {
			weights: []uint32{1},
			healthy: [][]int{{1}},
			want:    [][]uint32{{1000}},
		},
		"zones share by healthy count": {
			weights: []uint32{1},
			healthy: [][]int{{1, 2, 3}},
			want:    [][]uint32{{1000, 2000, 3000}},
		},
		"services keep their ratio whatever their endpoint counts": {
			// K = max(ceil(1000·3/60), ceil(1000·3/30), ceil(1000·2/10)) = 200.
			weights: []uint32{60, 30, 10},
			healthy: [][]int{{2, 1}, {1, 2}, {1, 1}},
			want:    [][]uint32{{8000, 4000}, {2000, 4000}, {1000, 1000}},
		},
		"largest remainder: the missing unit goes to the earlier of tied zones": {
			// K = max(ceil(1000·3/1), ceil(1000·7/1)) = 7000: backend 0 splits
			// 7000 three ways, 2333⅓ each, and the unit left over goes to zone 0.
			weights: []uint32{1, 1},
			healthy: [][]int{{1, 1, 1}, {7}},
			want:    [][]uint32{{2334, 2333, 2333}, {7000}},
		},
		"largest remainder: the missing unit goes to the largest remainder": {
			// K = max(ceil(1000·3/1), ceil(1000·7/1)) = 7000: backend 0 splits
			// 7000 as 2333⅓ and 4666⅔, so zone 1 rounds up.
			weights: []uint32{1, 1},
			healthy: [][]int{{1, 2}, {7}},
			want:    [][]uint32{{2333, 4667}, {7000}},
		},
		"drained zone gets 1 outside the share": {
			weights: []uint32{1, 1},
			healthy: [][]int{{1, 0}, {1}},
			want:    [][]uint32{{1000, 1}, {1000}},
		},
		"service with only draining endpoints": {
			weights: []uint32{3, 1},
			healthy: [][]int{{0, 0}, {2}},
			want:    [][]uint32{{1, 1}, {2000}},
		},
		"capped near MaxUint32: total stays within range": {
			weights: []uint32{math.MaxUint32 - 3, 1},
			healthy: [][]int{{1}, {1, 0}},
			// K = min(1000, floor((MaxUint32-1)/(MaxUint32-2))) = 1.
			want: [][]uint32{{math.MaxUint32 - 3}, {1, 1}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := localityWeights(tc.weights, tc.healthy)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestLocalityWeightsRounding checks the promises of localityWeights on
// random inputs: every zone within one unit of its exact share, service
// totals in the exact ratio of their weights, drained zones at 1, every
// weight ≥ 1, and the priority's total within MaxUint32.
func TestLocalityWeightsRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 20000 {
		weights, healthy := randomPriority(rng, i%4 == 0)
		got := localityWeights(weights, healthy)
		if err := checkLocalityWeights(weights, healthy, got); err != "" {
			t.Fatalf("weights %v, healthy %v: got %v: %s", weights, healthy, got, err)
		}
	}
}

// randomPriority draws one priority's backends: small weights usually, and
// with huge set weights whose sum approaches MaxUint32, where the scale is
// capped.
func randomPriority(rng *rand.Rand, huge bool) ([]uint32, [][]int) {
	n := 1 + rng.IntN(6)
	weights := make([]uint32, n)
	healthy := make([][]int, n)
	for b := range n {
		if huge {
			weights[b] = uint32(1 + rng.Uint64N(uint64(math.MaxUint32/8)))
		} else {
			weights[b] = uint32(1 + rng.IntN(1000))
		}
		zones := 1 + rng.IntN(5)
		for range zones {
			count := rng.IntN(40)
			if rng.IntN(5) == 0 {
				count = 0 // a drained zone
			}
			healthy[b] = append(healthy[b], count)
		}
	}
	return weights, healthy
}

func checkLocalityWeights(weights []uint32, healthy [][]int, got [][]uint32) string {
	var total uint64
	var k uint64 // the common scale, from the first backend with a healthy endpoint
	for b, zones := range healthy {
		var n, sum uint64
		for z, h := range zones {
			w := uint64(got[b][z])
			total += w
			if w == 0 {
				return "zero weight"
			}
			if h == 0 {
				if w != 1 {
					return "drained zone weight is not 1"
				}
				continue
			}
			n += uint64(h)
			sum += w
		}
		if n == 0 {
			continue
		}
		if sum%uint64(weights[b]) != 0 {
			return "a service's total is not a multiple of its weight"
		}
		if k == 0 {
			k = sum / uint64(weights[b])
		} else if sum/uint64(weights[b]) != k {
			return "services are not in the ratio of their weights"
		}
		for z, h := range zones {
			if h == 0 {
				continue
			}
			// |w_z − sum·h/n| < 1  ⇔  |w_z·n − sum·h| < n
			exact := sum * uint64(h)
			scaled := uint64(got[b][z]) * n
			if max(exact, scaled)-min(exact, scaled) >= n {
				return "a zone is a unit or more off its exact share"
			}
			if k*uint64(weights[b]) >= weightResolution*n && uint64(got[b][z]) < weightResolution*uint64(h) {
				return "a healthy endpoint got fewer units than the resolution allows"
			}
		}
	}
	if total > math.MaxUint32 {
		return "priority total exceeds MaxUint32"
	}
	return ""
}
