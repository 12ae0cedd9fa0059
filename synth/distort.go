package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/polyhedral/cpm/sparsevec"
)

// distortStream is the PCG stream (second seed word) of RandomAffine.
const distortStream = 0x64697374 // "dist"

// The ranges of RandomAffine's draws.
const (
	// DistortMinScale and DistortMaxScale bound a scale factor a_j, drawn
	// log-uniformly between them.
	DistortMinScale = 1e-2
	DistortMaxScale = 1e4
	// DistortMaxShift bounds the shift t_j of a feature, in units of its
	// largest magnitude: t_j is uniform in [-DistortMaxShift, DistortMaxShift).
	DistortMaxShift = 5
)

// Affine is a per-feature affine map of feature vectors,
//
//	x_j  ->  Scale[j-1]·x_j + Offset[j-1]   for j = 1..len(Scale),
//
// applied to every feature 1..len(Scale) of a row, stored or not: an
// absent entry is 0 and maps to Offset[j-1]. Scale and Offset hold float32
// values (widened), so the map written down is the map applied.
type Affine struct {
	Scale, Offset []float64
}

// Dim returns the number of features the map transforms.
func (m Affine) Dim() int { return len(m.Scale) }

// RandomAffine draws a random per-feature affine map of len(maxAbs)
// features, x_j -> a_j·x_j + b_j, for imitating raw, unscaled data from a
// data set prepared in a small range (Distort). maxAbs[j-1] is feature j's
// largest magnitude in the data (0 when the feature is never nonzero).
//
// For each feature j = 1..D in order, two draws u, v of
// rand.NewPCG(seed, 0x64697374) (never the global generator), each
// float64(Uint64()>>11)·2^-53, uniform on [0, 1), give
//
//	a_j = float32(10^(-2 + 6u))             log-uniform in [1e-2, 1e4], positive
//	t_j = 10v - 5                           uniform in [-5, 5)
//	b_j = float32(a_j · t_j · m_j)          m_j = maxAbs[j-1], or 1 if that is 0
//
// so the new feature is a_j·(x_j + t_j·m_j): the old one shifted by up to
// five times its largest magnitude, then scaled by between 1/100 and 10^4.
// Scales are positive (no sign flips): the map changes each feature's unit
// and origin, as raw published data differs from scaled data, not its
// direction.
// 10^(-2+6u) is computed with math.Pow, which is pure Go on the amd64 and
// arm64 ports, and then rounded to float32, so a seed gives the same map
// everywhere but in the rarest ties.
func RandomAffine(maxAbs []float64, seed uint64) Affine {
	src := rand.NewPCG(seed, distortStream)
	unit := func() float64 { return float64(src.Uint64()>>11) * 0x1p-53 }
	m := Affine{Scale: make([]float64, len(maxAbs)), Offset: make([]float64, len(maxAbs))}
	logMin, logMax := math.Log10(DistortMinScale), math.Log10(DistortMaxScale)
	for j, mj := range maxAbs {
		a := float64(float32(math.Pow(10, logMin+(logMax-logMin)*unit())))
		t := 2*DistortMaxShift*unit() - DistortMaxShift
		if mj == 0 {
			mj = 1
		}
		m.Scale[j] = a
		m.Offset[j] = float64(float32(a * t * mj))
	}
	return m
}

// Apply appends to dst the rows of src mapped by m, with the labels of src.
// Every output row stores all of features 1..m.Dim() in order (an absent
// input entry is 0 and becomes the offset), so the output is dense. A value
// is float32(float64(a_j·x_j) + b_j): the product of two float32 values is
// exact in float64, the sum rounds once in float64 and then once to
// float32 (the explicit conversion keeps the compiler from fusing the two
// operations, so the result is the same on every platform).
//
// Apply panics if src stores a feature index above m.Dim().
func (m Affine) Apply(dst, src *sparsevec.CSR) {
	d := m.Dim()
	row := sparsevec.Vector{Idx: make([]uint32, d), Val: make([]float32, d)}
	for j := range row.Idx {
		row.Idx[j] = uint32(j + 1)
	}
	for r, y := range src.Labels {
		x := src.Row(r)
		for j := range row.Val {
			row.Val[j] = float32(m.Offset[j])
		}
		for i, j := range x.Idx {
			if int(j) > d || j == 0 {
				panic(fmt.Sprintf("synth: Affine.Apply: row %d has feature %d, the map has %d", r, j, d))
			}
			row.Val[j-1] = float32(float64(m.Scale[j-1]*float64(x.Val[i])) + m.Offset[j-1])
		}
		dst.Append(y, row)
	}
}

// MaxAbs returns, for each feature j = 1..D of src (D its largest stored
// index), the largest |x_j| over its rows (0 for a feature never stored or
// stored only as 0).
func MaxAbs(src *sparsevec.CSR) []float64 {
	var d uint32
	for _, j := range src.Idx {
		d = max(d, j)
	}
	out := make([]float64, d)
	for i, j := range src.Idx {
		if j == 0 {
			continue
		}
		out[j-1] = max(out[j-1], math.Abs(float64(src.Val[i])))
	}
	return out
}

// Distort returns src under a random per-feature affine map of its features
// 1..D, D its largest stored index: RandomAffine(MaxAbs(src), seed) applied
// to every row (Affine.Apply), and that map. It imitates the same data as
// published raw, with each feature in its own unit and origin, for testing
// whether a learner's results depend on how its input was scaled: an
// affine-invariant learner gives the same results on both.
//
// Distort panics if src stores index 0 (the readers refuse it).
func Distort(src *sparsevec.CSR, seed uint64) (*sparsevec.CSR, Affine) {
	m := RandomAffine(MaxAbs(src), seed)
	var dst sparsevec.CSR
	m.Apply(&dst, src)
	return &dst, m
}
