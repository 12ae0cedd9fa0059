package summary

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestMeanStd(t *testing.T) {
	for _, c := range []struct {
		name      string
		x         []float64
		mean, std float64
	}{
		{"empty", nil, 0, 0},
		{"one", []float64{3.5}, 3.5, 0},
		{"two", []float64{1, 3}, 2, math.Sqrt2},
		// Σ(x−5)² = 32 over n−1 = 7: s = √(32/7).
		{"eight", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32.0 / 7)},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, s := MeanStd(c.x)
			if m != c.mean || s != c.std {
				t.Errorf("MeanStd(%v) = %v, %v, want %v, %v", c.x, m, s, c.mean, c.std)
			}
		})
	}
}

// TestMeanStdGolden pins the bits of the plain two-pass sums on values where
// gonum's stat.MeanStdDev (floats.Sum for the mean, the corrected two-pass
// algorithm for the variance) gives different last bits: the reason MeanStd
// is not stat.MeanStdDev.
func TestMeanStdGolden(t *testing.T) {
	x := []float64{2.05, 70.9, 0.67, 89.54, 3.55}
	m, s := MeanStd(x)
	if got, want := math.Float64bits(s), uint64(0x4045a7aeac8652a8); got != want {
		t.Errorf("MeanStd std bits = %#x, want %#x", got, want)
	}
	if got, want := math.Float64bits(m), uint64(0x4040abc6a7ef9db3); got != want {
		t.Errorf("MeanStd mean bits = %#x, want %#x", got, want)
	}
	if gm, gs := stat.MeanStdDev(x, nil); gm == m && gs == s {
		t.Errorf("gonum gives the same %v, %v: pick values where they differ", gm, gs)
	}
}
