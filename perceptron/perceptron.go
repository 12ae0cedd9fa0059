package perceptron

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Config holds the hyperparameters of the perceptron. The zero
// value is usable: every field documents its default.
type Config struct {
	// Epochs is the maximum number of passes over the data; training stops
	// earlier after a pass without a mistake. If 0, it defaults to 100.
	Epochs int
	// Lift is the feature map applied to every row (default linear.NoLift).
	Lift linear.Lift
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

func (c Config) withDefaults() (Config, error) {
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
	if c.Lift != linear.NoLift && c.Lift != linear.LiftQuadratic {
		return c, fmt.Errorf("unknown lift %d", int(c.Lift))
	}
	return c, nil
}

// Report summarises a perceptron run.
type Report struct {
	Epochs    int   // passes run
	Mistakes  []int // mistakes (updates) per pass
	Converged bool  // the last pass made no mistake
	Seconds   float64
}

// TotalMistakes returns the number of updates over all passes.
func (r *Report) TotalMistakes() int {
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
// With Lift, x̃ also carries the lifted feature (see linear.LiftQuadratic).
type Perceptron struct {
	Multiclass bool
	Classes    []float32 // binary: [label of a positive score, other]; multiclass: ascending
	Weights    *sparsevec.Matrix
	Bias       float32
	Lift       linear.Lift
	LiftIndex  uint32 // feature index of the lifted coordinate (0 without lift)
	Epochs     int    // passes run
}

// Train trains a perceptron on data: the binary form for two
// labels, the multiclass form for more.
func Train(ctx context.Context, cfg Config, data *sparsevec.CSR) (*Perceptron, *Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, fmt.Errorf("perceptron: %w", err)
	}
	classes, multi, err := linear.Classes(data, cfg.Positive)
	if err != nil {
		return nil, nil, fmt.Errorf("perceptron: %w", err)
	}
	k := 1
	if multi {
		k = len(classes)
	}
	start := time.Now()
	m := linear.New(data.Dim, k, float32(cfg.Bias), cfg.Lift)
	ys := rowClasses(data, classes)
	order := linear.NewEpochOrder(data.Rows(), cfg.Seed, 0x7065726365707472)
	rep := &Report{}
	for rep.Epochs < cfg.Epochs {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("perceptron: %w", err)
		}
		mistakes := 0
		for _, r := range order.Next() {
			if step(m, data.Row(int(r)), ys[r], multi) {
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
	if err := linear.FiniteWeights(m.W); err != nil {
		return nil, nil, fmt.Errorf("perceptron: %w", err)
	}
	return &Perceptron{
		Multiclass: multi, Classes: classes, Weights: m.W, Bias: m.Bias,
		Lift: m.Lift, LiftIndex: m.LiftIndex, Epochs: rep.Epochs,
	}, rep, nil
}

// step scores row x of class index c (binary: 0 is y = +1) and
// updates the weights on a mistake, which it reports. It does not allocate
// once the lift scratch has grown to the longest row.
func step(m *linear.Machine, x sparsevec.Vector, c int, multi bool) bool {
	x = m.Prepare(x)
	s := m.Scores(x)
	if !multi {
		y := float32(1)
		if c != 0 {
			y = -1
		}
		if y*s[0] > 0 {
			return false
		}
		m.Add(0, y, x)
		return true
	}
	j := maxFaceExcept(s, c)
	if s[c] > s[j] {
		return false
	}
	m.Add(c, 1, x)
	m.Add(j, -1, x)
	return true
}

// rowClasses returns the class index of every row of data.
func rowClasses(data *sparsevec.CSR, classes []float32) []int {
	ys := make([]int, data.Rows())
	for r, y := range data.Labels {
		ys[r] = labelIndex(classes, y)
	}
	return ys
}

// Model converts p to the shared model file: learner "perceptron", one
// D×K matrix (K = 1 binary, K = classes multiclass) with the bias weights
// in row 0, params lift and lift_index.
func (p *Perceptron) Model() *model.Model {
	return &model.Model{
		Learner: Learner, Sides: 1, K: p.Weights.K, D: p.Weights.D,
		Bias: float64(p.Bias), Iterations: int64(p.Epochs),
		Classes: slices.Clone(p.Classes), Multiclass: p.Multiclass,
		Params:  linear.LiftParams(p.Lift, p.LiftIndex),
		Weights: []*sparsevec.Matrix{p.Weights},
	}
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
