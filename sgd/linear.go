package sgd

import (
	"fmt"
	"math/rand/v2"

	"github.com/polyhedral/cpm/sparsevec"
)

// Lift is a feature map applied to every row before a linear learner sees
// it: the lifting trick of Har-Peled, "The Perceptron Algorithm", section
// 24.2, which turns a circle in the plane into a plane in space.
type Lift int

const (
	// NoLift leaves rows as they are.
	NoLift Lift = iota
	// LiftQuadratic appends one feature, z = ‖x‖² = Σ_j x_j², at feature
	// index D0, one past the largest feature index of the training data
	// (D0 = training CSR.Dim). The squared norm is taken over the row's
	// features with index < D0 only, so a test row's features unseen in
	// training neither get a weight nor change z. With the bias this maps
	// (x, y) ∈ R² to (1, x, y, x²+y²): a linear separator there is a circle
	// (or a line) in the plane (Theorem 24.2.1).
	LiftQuadratic
)

// String returns "none" or "quadratic".
func (l Lift) String() string {
	switch l {
	case NoLift:
		return "none"
	case LiftQuadratic:
		return "quadratic"
	}
	return fmt.Sprintf("Lift(%d)", int(l))
}

// ParseLift is the inverse of Lift.String.
func ParseLift(s string) (Lift, error) {
	switch s {
	case "none", "":
		return NoLift, nil
	case "quadratic":
		return LiftQuadratic, nil
	}
	return 0, fmt.Errorf("unknown lift %q (want none or quadratic)", s)
}

// linear is a D×K weight matrix scored as s_k = W_k·x̃ with the augmented
// row x̃ = (b, x, z(x)): the constant bias feature b at row 0, the row's
// features, and the lifted feature z at row liftIdx when lifting. It holds
// scratch space, so each goroutine needs its own.
type linear struct {
	w       *sparsevec.Matrix
	bias    float32 // value of the constant feature (0: no bias)
	lift    Lift
	liftIdx uint32 // row of the lifted feature (lift != NoLift)
	raw     []float32
	idx     []uint32
	val     []float32
}

// newLinear returns a zero D×K machine for rows of dimension dim (the
// training CSR.Dim) with the given lift and bias value.
func newLinear(dim, k int, bias float32, lift Lift) *linear {
	d := max(dim, 1)
	l := &linear{bias: bias, lift: lift}
	if lift != NoLift {
		l.liftIdx = uint32(d)
		d++
	}
	l.w = sparsevec.NewMatrix(d, k)
	l.raw = make([]float32, l.w.Stride)
	return l
}

// view wraps an existing weight matrix (a loaded model's) for scoring.
func viewLinear(w *sparsevec.Matrix, bias float32, lift Lift, liftIdx uint32) *linear {
	return &linear{w: w, bias: bias, lift: lift, liftIdx: liftIdx, raw: make([]float32, w.Stride)}
}

// prepare returns the part of x that the matrix scores: x clipped to the
// features it knows, with the lifted feature appended when lifting. The
// result may alias l's scratch and is valid until the next call.
func (l *linear) prepare(x sparsevec.Vector) sparsevec.Vector {
	if l.lift == NoLift {
		return x.Below(l.w.D)
	}
	x = x.Below(int(l.liftIdx))
	var z float32
	for _, v := range x.Val[:len(x.Idx)] {
		z += v * v
	}
	l.idx = append(append(l.idx[:0], x.Idx...), l.liftIdx)
	l.val = append(append(l.val[:0], x.Val[:len(x.Idx)]...), z)
	return sparsevec.Vector{Idx: l.idx, Val: l.val}
}

// scores sets l.raw[k] = W_k·x̃ for a prepared x and returns l.raw[:K].
func (l *linear) scores(x sparsevec.Vector) []float32 {
	l.w.Scores(l.raw, x)
	if l.bias != 0 {
		row0 := l.w.Row(0)
		for k := range l.w.K {
			l.raw[k] += l.bias * row0[k]
		}
	}
	return l.raw[:l.w.K]
}

// add performs W_k += a·x̃ for a prepared x.
func (l *linear) add(k int, a float32, x sparsevec.Vector) {
	l.w.AddToFace(k, a, x)
	if l.bias != 0 {
		row0 := l.w.Row(0)
		row0[k] += a * l.bias
	}
}

// epochOrder holds the row order of online learners: every epoch visits the
// rows in a fresh permutation drawn from a PCG seeded with the config's
// seed (Fisher–Yates, see shuffle), so the same seed gives the same order.
type epochOrder struct {
	rng  *rand.PCG
	perm []int32
}

func newEpochOrder(n int, seed, stream uint64) *epochOrder {
	o := &epochOrder{rng: rand.NewPCG(seed, stream), perm: make([]int32, n)}
	for i := range o.perm {
		o.perm[i] = int32(i)
	}
	return o
}

// next reshuffles and returns the order of the next epoch.
func (o *epochOrder) next() []int32 {
	shuffle(o.rng, o.perm)
	return o.perm
}

// minFace returns the index of the smallest score, ties to the lowest index.
func minFace(s []float32) int {
	best := 0
	for k := 1; k < len(s); k++ {
		if s[k] < s[best] {
			best = k
		}
	}
	return best
}

// maxFaceExcept returns the index of the largest score other than skip (-1:
// none skipped), ties to the lowest index.
func maxFaceExcept(s []float32, skip int) int {
	best := -1
	for k, v := range s {
		if k != skip && (best < 0 || v > s[best]) {
			best = k
		}
	}
	return best
}

// labelIndex maps labels to indices into classes. classes is small (the
// label map), so a linear scan beats a map and does not allocate.
func labelIndex(classes []float32, y float32) int {
	for i, c := range classes {
		if c == y {
			return i
		}
	}
	return -1
}
