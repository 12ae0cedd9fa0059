package sgd

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// PerceptronConfig holds the hyperparameters of the perceptron. The zero
// value is usable: every field documents its default.
type PerceptronConfig struct {
	// Epochs is the maximum number of passes over the data; training stops
	// earlier after a pass without a mistake. If 0, it defaults to 100.
	Epochs int
	// Lift is the feature map applied to every row (default NoLift).
	Lift Lift
	// Bias is the value of the constant feature that augments every row
	// (row 0 of the weights). If 0, it defaults to 1. Set NoBias to train a
	// separator through the origin.
	Bias   float64
	NoBias bool
	// Seed seeds the row order: each epoch visits the rows in a fresh
	// seeded permutation.
	Seed uint64
	// Positive, if set, is the label predicted for a positive score in the
	// binary case; by default it is the larger label.
	Positive *float32
}

func (c PerceptronConfig) withDefaults() (PerceptronConfig, error) {
	c.Epochs = cmp.Or(c.Epochs, 100)
	if c.Epochs < 0 {
		return c, fmt.Errorf("epochs = %d, want >= 1", c.Epochs)
	}
	c.Bias = cmp.Or(c.Bias, 1)
	if c.NoBias {
		c.Bias = 0
	}
	if math.IsNaN(c.Bias) || math.IsInf(c.Bias, 0) {
		return c, fmt.Errorf("bias = %v, want a finite value", c.Bias)
	}
	if c.Lift != NoLift && c.Lift != LiftQuadratic {
		return c, fmt.Errorf("unknown lift %d", int(c.Lift))
	}
	return c, nil
}

// PerceptronReport summarises a perceptron run.
type PerceptronReport struct {
	Epochs    int   // passes run
	Mistakes  []int // mistakes (updates) per pass
	Converged bool  // the last pass made no mistake
	Seconds   float64
}

// TotalMistakes returns the number of updates over all passes.
func (r *PerceptronReport) TotalMistakes() int {
	n := 0
	for _, m := range r.Mistakes {
		n += m
	}
	return n
}

// Perceptron is a trained linear perceptron, binary or multiclass.
//
// Binary (Rosenblatt; Har-Peled, "The Perceptron Algorithm", section 24.1;
// Xu & Zhang eq. 2-3): score f(x) = w·x̃ with x̃ = (b, x) augmented by the
// constant bias feature b, label Classes[0] (y = +1) when f(x) > 0. A row is
// a mistake when y·f(x) <= 0, and a mistake makes the update w ← w + y·x̃
// (so the threshold moves by y·b). If the rows are separable with margin γ
// inside a ball of radius R (both measured on x̃), there are at most
// (R/γ)² mistakes in all (Theorem 24.1.1).
//
// Multiclass (Kesler's construction; Xu & Zhang eq. 4-5): one score per
// class f_i(x) = w_i·x̃, prediction argmax_i f_i (ties to the lowest class
// index). A row of class i is a mistake when some j ≠ i has f_i <= f_j;
// then w_i ← w_i + x̃ and w_j ← w_j − x̃ for j = argmax_{j≠i} f_j, the
// incorrectly chosen class.
//
// With Lift, x̃ also carries the lifted feature (see LiftQuadratic).
type Perceptron struct {
	Multiclass bool
	Classes    []float32 // binary: [label of a positive score, other]; multiclass: ascending
	Weights    *sparsevec.Matrix
	Bias       float32
	Lift       Lift
	LiftIndex  uint32 // feature index of the lifted coordinate (0 without lift)
	Epochs     int    // passes run
}

// TrainPerceptron trains a perceptron on data: the binary form for two
// labels, the multiclass form for more.
func TrainPerceptron(ctx context.Context, cfg PerceptronConfig, data *sparsevec.CSR) (*Perceptron, *PerceptronReport, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, fmt.Errorf("sgd: perceptron: %w", err)
	}
	classes, multi, err := onlineClasses(data, cfg.Positive)
	if err != nil {
		return nil, nil, fmt.Errorf("sgd: perceptron: %w", err)
	}
	k := 1
	if multi {
		k = len(classes)
	}
	start := time.Now()
	m := newLinear(data.Dim, k, float32(cfg.Bias), cfg.Lift)
	ys := rowClasses(data, classes)
	order := newEpochOrder(data.Rows(), cfg.Seed, 0x7065726365707472)
	rep := &PerceptronReport{}
	for rep.Epochs < cfg.Epochs {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("sgd: perceptron: %w", err)
		}
		mistakes := 0
		for _, r := range order.next() {
			if perceptronStep(m, data.Row(int(r)), ys[r], multi) {
				mistakes++
			}
		}
		rep.Epochs++
		rep.Mistakes = append(rep.Mistakes, mistakes)
		if mistakes == 0 {
			rep.Converged = true
			break
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	if err := finiteWeights(m.w); err != nil {
		return nil, nil, fmt.Errorf("sgd: perceptron: %w", err)
	}
	return &Perceptron{
		Multiclass: multi, Classes: classes, Weights: m.w, Bias: m.bias,
		Lift: m.lift, LiftIndex: m.liftIdx, Epochs: rep.Epochs,
	}, rep, nil
}

// perceptronStep scores row x of class index c (binary: 0 is y = +1) and
// updates the weights on a mistake, which it reports. It does not allocate
// once the lift scratch has grown to the longest row.
func perceptronStep(m *linear, x sparsevec.Vector, c int, multi bool) bool {
	x = m.prepare(x)
	s := m.scores(x)
	if !multi {
		y := float32(1)
		if c != 0 {
			y = -1
		}
		if y*s[0] > 0 {
			return false
		}
		m.add(0, y, x)
		return true
	}
	j := maxFaceExcept(s, c)
	if s[c] > s[j] {
		return false
	}
	m.add(c, 1, x)
	m.add(j, -1, x)
	return true
}

// onlineClasses returns the label map of data: for two labels
// [positive, other] (positive defaults to the larger label), for more the
// labels ascending with multi set.
func onlineClasses(data *sparsevec.CSR, positive *float32) (classes []float32, multi bool, err error) {
	if data.Rows() == 0 {
		return nil, false, fmt.Errorf("no training rows")
	}
	labels := Labels(data)
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

// rowClasses returns the class index of every row of data.
func rowClasses(data *sparsevec.CSR, classes []float32) []int {
	ys := make([]int, data.Rows())
	for r, y := range data.Labels {
		ys[r] = labelIndex(classes, y)
	}
	return ys
}

// finiteWeights reports an error if training overflowed a weight.
func finiteWeights(w *sparsevec.Matrix) error {
	for _, v := range w.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("a weight overflowed to %v; scale the features down", v)
		}
	}
	return nil
}

// Model converts p to the shared model file: learner "perceptron", one
// D×K matrix (K = 1 binary, K = classes multiclass) with the bias weights
// in row 0, params lift and lift_index.
func (p *Perceptron) Model() *model.Model {
	return &model.Model{
		Learner: "perceptron", Sides: 1, K: p.Weights.K, D: p.Weights.D,
		Bias: float64(p.Bias), Iterations: int64(p.Epochs),
		Classes: slices.Clone(p.Classes), Multiclass: p.Multiclass,
		Params:  liftParams(p.Lift, p.LiftIndex),
		Weights: []*sparsevec.Matrix{p.Weights},
	}
}

func liftParams(l Lift, idx uint32) map[string]string {
	if l == NoLift {
		return map[string]string{"lift": l.String()}
	}
	return map[string]string{"lift": l.String(), "lift_index": strconv.FormatUint(uint64(idx), 10)}
}

// parseLift reads the lift params of a linear model m.
func parseLift(m *model.Model) (Lift, uint32, error) {
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
