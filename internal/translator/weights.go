package translator

import (
	"math"
	"math/bits"
	"slices"
)

// weightResolution is the minimum number of weight units given to each
// healthy endpoint when the total allows it. Rounding moves a zone by less
// than one unit, so with at least 1000 units per endpoint the rounding
// error inside a service stays below 0.1 % of any zone's share.
const weightResolution = 1000

// localityWeights computes the locality weights of the backends of one
// priority.
//
// weights[b] is backend b's weight w_b (≥ 1); healthy[b][z] is the number
// of HEALTHY endpoints in zone z of backend b, for every zone that has at
// least one endpoint. The result has the same shape as healthy.
//
// Each backend's weight is scaled by a common factor K to W_b = w_b·K and
// shared among its zones in proportion to their healthy endpoint counts
// n_z / N_b, so that the split between services is exactly w_b : w_c
// while inside a service every healthy endpoint gets the same share:
//
//   - K = max over b of ceil(1000·N_b / w_b), at least 1, capped so that
//     the weights of one priority sum to at most MaxUint32 (Envoy and gRPC
//     reject more). The DAG guarantees Σ w_b ≤ MaxUint32, so K ≥ 1 fits.
//   - W_b is split by largest remainder: each zone first gets
//     floor(W_b·n_z / N_b), then the units still missing go one each to
//     the zones with the largest remainders (ties to the earlier zone).
//
// Rounding bound: every zone with a healthy endpoint is within one unit of
// its exact share W_b·n_z / N_b, and the zones of a backend sum to exactly
// W_b, so service totals are exact whenever every zone has a healthy
// endpoint.
//
// Two cases add weight outside W_b:
//   - A zone with endpoints but none healthy (all DRAINING) gets weight 1:
//     Envoy and gRPC require locality weights ≥ 1, and a locality with no
//     healthy endpoint carries no traffic in either, so the extra unit
//     never shifts load. It does add 1 to the backend's total.
//   - When the MaxUint32 cap forces W_b below N_b (only possible with
//     weights near MaxUint32), a healthy zone that would round to 0 is
//     raised to 1.
func localityWeights(weights []uint32, healthy [][]int) [][]uint32 {
	out := make([][]uint32, len(healthy))
	totals := make([]uint64, len(healthy))
	var sumW, drainedZones uint64
	for b, zones := range healthy {
		out[b] = make([]uint32, len(zones))
		for _, n := range zones {
			totals[b] += uint64(n)
			if n == 0 {
				drainedZones++
			}
		}
		if totals[b] > 0 {
			sumW += uint64(max(weights[b], 1))
		}
	}
	k := scale(weights, totals, sumW, drainedZones)
	for b, zones := range healthy {
		if totals[b] == 0 {
			for z := range zones {
				out[b][z] = 1
			}
			continue
		}
		splitLargestRemainder(uint64(max(weights[b], 1))*k, zones, totals[b], out[b])
	}
	return out
}

// scale picks K (see localityWeights).
func scale(weights []uint32, totals []uint64, sumW, drainedZones uint64) uint64 {
	if sumW == 0 {
		return 1
	}
	k := uint64(1)
	for b, n := range totals {
		if n == 0 {
			continue
		}
		w := uint64(max(weights[b], 1))
		k = max(k, (weightResolution*n+w-1)/w)
	}
	var room uint64 = math.MaxUint32
	if drainedZones < room {
		room -= drainedZones
	}
	return max(min(k, room/sumW), 1)
}

// splitLargestRemainder splits total across zones in proportion to
// healthy[z]/n and writes the shares to out. Zones with no healthy
// endpoint get 1 (see localityWeights).
func splitLargestRemainder(total uint64, healthy []int, n uint64, out []uint32) {
	rem := make([]uint64, len(healthy))
	var given uint64
	for z, h := range healthy {
		if h == 0 {
			continue
		}
		// total·h/n in 128 bits: h ≤ n, so the quotient is ≤ total and fits.
		hi, lo := bits.Mul64(total, uint64(h))
		q, r := bits.Div64(hi, lo, n)
		out[z], rem[z] = uint32(q), r
		given += q
	}
	order := make([]int, 0, len(healthy))
	for z, h := range healthy {
		if h > 0 {
			order = append(order, z)
		}
	}
	// Stable: equal remainders keep zone order, so the result is
	// deterministic.
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case rem[a] > rem[b]:
			return -1
		case rem[a] < rem[b]:
			return 1
		}
		return 0
	})
	for i := uint64(0); i < total-given && int(i) < len(order); i++ {
		out[order[i]]++
	}
	for z := range out {
		if out[z] == 0 {
			out[z] = 1
		}
	}
}
