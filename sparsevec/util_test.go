package sparsevec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Helpers shared by the tests and benchmarks of this package. All randomness
// comes from a seeded *rand.Rand handed in by the caller.

// guardLen is the number of NaN guard words on each side of a guarded slice.
const guardLen = 2 * Lanes

// guardVal is the sigil stored in guard words, compared bitwise: a
// signalling NaN. A kernel that reads a guard turns its result into NaN; one
// that writes a guard, even by read-modify-write (w += 0·x included), leaves
// a quiet NaN, whose bits differ, because x86 and arm64 arithmetic quiets
// signalling NaNs. A quiet NaN guard would survive w += a·x unchanged.
var guardVal = math.Float32frombits(0x7f80dead)

// guarded returns a slice of length n whose backing array has guardLen guard
// words directly before and after it. The returned slice keeps the capacity
// that runs into the back guard, so a kernel that slices up to cap instead
// of len writes into the guard and is caught by checkGuards. whole is the
// whole backing array.
func guarded(n int) (v, whole []float32) {
	whole = make([]float32, n+2*guardLen)
	for i := range whole {
		whole[i] = guardVal
	}
	v = whole[guardLen : guardLen+n]
	clear(v)
	return v, whole
}

// checkGuards reports an error if a guard word of whole was modified.
func checkGuards(t *testing.T, name string, whole []float32) {
	t.Helper()
	n := len(whole)
	for i := 0; i < guardLen; i++ {
		if math.Float32bits(whole[i]) != math.Float32bits(guardVal) {
			t.Errorf("%s: front guard %d overwritten: %v", name, guardLen-i, whole[i])
		}
		if math.Float32bits(whole[n-1-i]) != math.Float32bits(guardVal) {
			t.Errorf("%s: back guard %d overwritten: %v", name, guardLen-i, whole[n-1-i])
		}
	}
}

// randVector returns a sparse vector with nnz distinct ascending indices
// drawn from [0, d) and values uniform in [-1, 1). It panics if nnz > d.
func randVector(rng *rand.Rand, d, nnz int) Vector {
	idx := make([]uint32, 0, nnz)
	for _, j := range rng.Perm(d)[:nnz] {
		idx = append(idx, uint32(j))
	}
	slices.Sort(idx)
	val := make([]float32, nnz)
	for i := range val {
		val[i] = 2*rng.Float32() - 1
	}
	return Vector{Idx: idx, Val: val}
}

// mnistVector returns a row that looks like an MNIST image in LIBSVM form:
// nnz ascending pixel indices in [1, 784] with values in (0, 1].
func mnistVector(rng *rand.Rand, nnz int) Vector {
	x := randVector(rng, 784, nnz)
	for i := range x.Idx {
		x.Idx[i]++
		x.Val[i] = 1 - rng.Float32()
	}
	return x
}

// dense is the reference model: a K×D float64 matrix stored face-major,
// W[k][j], built independently of Matrix.
type dense [][]float64

func newDense(k, d int) dense {
	w := make(dense, k)
	for i := range w {
		w[i] = make([]float64, d)
	}
	return w
}

// randFill fills m and ref with the same weights uniform in [-1, 1), each
// exactly representable as a float32.
func randFill(rng *rand.Rand, m *Matrix, ref dense) {
	for j := 0; j < m.D; j++ {
		for k := 0; k < m.K; k++ {
			v := 2*rng.Float32() - 1
			m.Set(j, k, v)
			ref[k][j] = float64(v)
		}
	}
}

// scores returns the exact scores Σ_i x_i·W[k][x.Idx[i]] and the
// magnitudes Σ_i |x_i·W[k][x.Idx[i]]| used for error bounds. Every product
// of two float32 is exact in float64, and the float64 sum of at most a few
// hundred of them is within 2^-45 relative of exact, far below float32
// resolution, so these serve as exact values.
func (w dense) scores(x Vector) (s, mag []float64) {
	s = make([]float64, len(w))
	mag = make([]float64, len(w))
	for k, row := range w {
		for i, j := range x.Idx {
			p := float64(x.Val[i]) * row[j]
			s[k] += p
			mag[k] += math.Abs(p)
		}
	}
	return s, mag
}

// u is the unit roundoff of float32.
const u = 0x1p-24

// gamma returns γ_n = n·u/(1-n·u), the classic bound on the relative error
// of a float32 dot product of length n computed in any order, with or
// without FMA (Higham, Accuracy and Stability of Numerical Algorithms,
// 2nd ed., §3.1): |fl(Σ a_i b_i) - Σ a_i b_i| <= γ_n Σ |a_i b_i|.
// Summation with several partial accumulators obeys the same bound.
func gamma(n int) float64 {
	nu := float64(n) * u
	return nu / (1 - nu)
}

// cloneVector returns a deep copy of x.
func cloneVector(x Vector) Vector {
	return Vector{Idx: slices.Clone(x.Idx), Val: slices.Clone(x.Val)}
}

func sameVector(a, b Vector) bool {
	return slices.Equal(a.Idx, b.Idx) && slices.Equal(a.Val, b.Val)
}
