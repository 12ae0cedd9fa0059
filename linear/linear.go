// Package linear is the scoring machine that the perceptron (package
// perceptron) and the Polyceptron (package polyceptron) share: a D×K
// feature-major weight matrix scored as s_k = W_k·x̃ on the augmented row
// x̃ = (b, x, z(x)), with the bias feature b and the lifting trick z of
// Har-Peled, "The Perceptron Algorithm", section 24.2. It also holds the
// seeded epoch order of the online learners (the kernel perceptron's
// too), their label map and the model-file parameters of a lift.
//
// It is a package of its own, rather than exported helpers of package
// perceptron, so that each learner package exports only its learner: the
// Polyceptron uses the machine, not the perceptron.
package linear

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/polyhedral/cpm/internal/rng"
	"github.com/polyhedral/cpm/model"
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

// Machine is a D×K weight matrix scored as s_k = W_k·x̃ with the augmented
// row x̃ = (b, x, z(x)): the constant bias feature b (Bias) at row 0, the
// row's features, and the lifted feature z at row LiftIndex when lifting.
// It holds scratch space, so each goroutine needs its own.
type Machine struct {
	W         *sparsevec.Matrix
	Bias      float32 // value of the constant feature (0: no bias)
	Lift      Lift
	LiftIndex uint32 // row of the lifted feature (Lift != NoLift)
	raw       []float32
	idx       []uint32
	val       []float32

	// rows, for a compact model's scoring matrix (model.Model.Rows and
	// ScoringWeights), maps a feature to its row of W; liftRow is the row
	// of LiftIndex (the zero row when the lifted feature is not stored).
	rows    *model.RowMap
	liftRow uint32
}

// New returns a zero D×K machine for rows of dimension dim (the training
// CSR.Dim) with the given lift and bias value: D = max(dim, 1), plus one
// row for the lifted feature when lifting.
func New(dim, k int, bias float32, lift Lift) *Machine {
	d := max(dim, 1)
	l := &Machine{Bias: bias, Lift: lift}
	if lift != NoLift {
		l.LiftIndex = uint32(d)
		d++
	}
	l.W = sparsevec.NewMatrix(d, k)
	l.raw = make([]float32, l.W.Stride)
	return l
}

// View wraps an existing weight matrix (a loaded model's) for scoring.
func View(w *sparsevec.Matrix, bias float32, lift Lift, liftIdx uint32) *Machine {
	return &Machine{W: w, Bias: bias, Lift: lift, LiftIndex: liftIdx, raw: make([]float32, w.Stride)}
}

// Prepare returns the part of x that the matrix scores: x clipped to the
// features it knows, with the lifted feature appended when lifting. The
// result may alias l's scratch and is valid until the next call.
//
// For a compact model's machine (ViewModel of a model with Rows) the
// features are mapped to the rows of W (model.RowMap: the zero row for a
// feature that is not stored) and the lifted feature to its row, so that
// W sees the entries, in order, that the dense model's matrix sees.
func (l *Machine) Prepare(x sparsevec.Vector) sparsevec.Vector {
	if l.rows != nil {
		return l.prepareCompact(x)
	}
	if l.Lift == NoLift {
		return x.Below(l.W.D)
	}
	x = x.Below(int(l.LiftIndex))
	z := liftValue(x)
	l.idx = append(append(l.idx[:0], x.Idx...), l.LiftIndex)
	l.val = append(append(l.val[:0], x.Val[:len(x.Idx)]...), z)
	return sparsevec.Vector{Idx: l.idx, Val: l.val}
}

// prepareCompact is Prepare for a compact model's machine.
func (l *Machine) prepareCompact(x sparsevec.Vector) sparsevec.Vector {
	if l.Lift == NoLift {
		l.idx, l.val = l.rows.AppendRow(l.idx[:0], l.val[:0], x)
		return sparsevec.Vector{Idx: l.idx, Val: l.val}
	}
	x = x.Below(int(l.LiftIndex))
	z := liftValue(x)
	l.idx, l.val = l.rows.AppendRow(l.idx[:0], l.val[:0], x)
	l.idx, l.val = append(l.idx, l.liftRow), append(l.val, z)
	return sparsevec.Vector{Idx: l.idx, Val: l.val}
}

// liftValue returns the lifted feature z = Σ_j x_j² of the row x, summed
// in float32 in index order.
func liftValue(x sparsevec.Vector) float32 {
	var z float32
	for _, v := range x.Val[:len(x.Idx)] {
		z += v * v
	}
	return z
}

// Scores returns s_k = W_k·x̃ for a prepared x, k < K, in l's scratch
// (valid until the next call).
func (l *Machine) Scores(x sparsevec.Vector) []float32 {
	l.W.Scores(l.raw, x)
	if l.Bias != 0 {
		row0 := l.W.Row(0)
		for k := range l.W.K {
			l.raw[k] += l.Bias * row0[k]
		}
	}
	return l.raw[:l.W.K]
}

// Add performs W_k += a·x̃ for a prepared x.
func (l *Machine) Add(k int, a float32, x sparsevec.Vector) {
	l.W.AddToFace(k, a, x)
	if l.Bias != 0 {
		row0 := l.W.Row(0)
		row0[k] += a * l.Bias
	}
}

// FiniteWeights reports an error if training overflowed a weight of w.
func FiniteWeights(w *sparsevec.Matrix) error {
	for _, v := range w.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("a weight overflowed to %v; scale the features down", v)
		}
	}
	return nil
}

// EpochOrder holds the row order of online learners: every epoch visits the
// rows in a fresh permutation drawn from a PCG seeded with the config's
// seed (Fisher–Yates, see shuffle), so the same seed gives the same order.
type EpochOrder struct {
	rng  *rand.PCG
	perm []int32
}

// NewEpochOrder returns the order of n rows drawn from a PCG on
// (seed, stream).
func NewEpochOrder(n int, seed, stream uint64) *EpochOrder {
	o := &EpochOrder{rng: rand.NewPCG(seed, stream), perm: make([]int32, n)}
	for i := range o.perm {
		o.perm[i] = int32(i)
	}
	return o
}

// Next reshuffles and returns the order of the next epoch. The slice is
// the order's own and changes at the next call.
func (o *EpochOrder) Next() []int32 {
	rng.ShuffleMod(o.rng, o.perm)
	return o.perm
}

// Classes returns the label map of data: for two labels [positive, other]
// (positive defaults to the larger label), for more the labels ascending
// with multi set.
func Classes(data *sparsevec.CSR, positive *float32) (classes []float32, multi bool, err error) {
	if data.Rows() == 0 {
		return nil, false, fmt.Errorf("no training rows")
	}
	labels := data.DistinctLabels()
	switch {
	case len(labels) < 2:
		return nil, false, fmt.Errorf("the training data has only the label %v; need at least two", labels[0])
	case len(labels) > 2:
		if positive != nil {
			return nil, false, fmt.Errorf("a positive label applies to binary data, which has 2 labels, not %d", len(labels))
		}
		return labels, true, nil
	}
	classes = []float32{labels[1], labels[0]}
	if positive != nil {
		switch *positive {
		case labels[0]:
			classes = []float32{labels[0], labels[1]}
		case labels[1]:
		default:
			return nil, false, fmt.Errorf("positive label %v is not in the data (labels %v and %v)", *positive, labels[0], labels[1])
		}
	}
	return classes, false, nil
}

// LiftParams returns the model-file parameters of a lift: "lift" and,
// when lifting, "lift_index".
func LiftParams(l Lift, idx uint32) map[string]string {
	if l == NoLift {
		return map[string]string{"lift": l.String()}
	}
	return map[string]string{"lift": l.String(), "lift_index": strconv.FormatUint(uint64(idx), 10)}
}

// ParseLiftParams reads the lift parameters of a linear model m (see
// LiftParams); the lifted feature must be the last row of m.
func ParseLiftParams(m *model.Model) (Lift, uint32, error) {
	l, err := ParseLift(m.Params["lift"])
	if err != nil {
		return 0, 0, err
	}
	if l == NoLift {
		return l, 0, nil
	}
	idx, err := strconv.ParseUint(m.Params["lift_index"], 10, 32)
	if err != nil || idx == 0 || int(idx) != m.D-1 {
		return 0, 0, fmt.Errorf("lift_index %q: want the last feature row, %d", m.Params["lift_index"], m.D-1)
	}
	return l, uint32(idx), nil
}

// ViewModel returns the machine of m, a valid single-sided linear model
// (not one-vs-one) of package pkg, dense or compact, for scoring; errors
// name pkg.
func ViewModel(m *model.Model, pkg string) (*Machine, error) {
	if m.OvO || m.Sides != 1 {
		return nil, fmt.Errorf("%s: %s model must be single-sided and not one-vs-one", pkg, m.Learner)
	}
	lift, idx, err := ParseLiftParams(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %s model: %w", pkg, m.Learner, err)
	}
	l := View(m.ScoringWeights()[0], float32(m.Bias), lift, idx)
	if m.Rows != nil {
		l.rows = m.RowMap()
		l.liftRow = uint32(l.rows.Zero())
		if r, ok := l.rows.Row(idx); ok {
			l.liftRow = uint32(r)
		}
	}
	return l, nil
}
