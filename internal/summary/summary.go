// Package summary holds the summary statistics that the module prints next to
// repeated runs.
//
// MeanStd is written out rather than taken from gonum's stat.MeanStdDev:
// gonum sums the mean with floats.Sum (whose order of additions is its
// own) and the variance with the corrected two-pass algorithm of Chan,
// Golub and LeVeque (it subtracts (Σ(xᵢ−x̄))²/n), so both can differ from
// the plain sums below in the last bits, and it returns NaN for a single
// value. The figures that cv and cpm bench print come from the plain sums.
package summary

import "math"

// MeanStd returns the mean and the sample standard deviation of x,
//
//	x̄ = (1/n) Σ xᵢ,    s = √( Σ (xᵢ − x̄)² / (n − 1) ),
//
// each sum taken in index order in two passes. The deviation is 0 for fewer
// than two values, and both are 0 for an empty x.
func MeanStd(x []float64) (mean, std float64) {
	if len(x) == 0 {
		return 0, 0
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}
