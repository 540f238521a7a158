package stats

import (
	"math"
	"slices"
)

// Dist summarises a sample: its size, p50, p95 and maximum. Percentiles
// are nearest-rank: the p-th percentile of n values sorted ascending is
// the value of rank ⌈p/100 × n⌉ (1-based) — always a value that was
// measured, never an interpolation between two. With no value, N is 0
// and the figures are NaN.
type Dist struct {
	N             int
	P50, P95, Max float64
}

// Empty says there was nothing to summarise.
func (d Dist) Empty() bool { return d.N == 0 }

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted
// values; NaN for none.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// dist sorts values and summarises them.
func dist(values []float64) Dist {
	if len(values) == 0 {
		return Dist{P50: math.NaN(), P95: math.NaN(), Max: math.NaN()}
	}
	slices.Sort(values)
	return Dist{N: len(values), P50: Percentile(values, 50), P95: Percentile(values, 95), Max: values[len(values)-1]}
}

// millis is µs as ms.
func millis(us []int64) []float64 {
	ms := make([]float64, len(us))
	for i, v := range us {
		ms[i] = float64(v) / 1000
	}
	return ms
}
