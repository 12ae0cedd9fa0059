package sgd

import (
	"fmt"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Classifier predicts with a CPM model: binary (single- or double-sided) or
// one-vs-one. It holds scratch space, so it is not safe for concurrent use;
// make one per goroutine (they share the model's weights read-only). Its
// own memory is O(K + classes): the one-vs-one pairs are enumerated, not
// stored, so a model with millions of pairs costs no more than its
// weights.
type Classifier struct {
	m     *model.Model
	raw   []float32
	votes []int
	sums  []float64
	last  float32 // the binary score of the last row predicted
}

// NewClassifier returns a classifier for m, which must be a valid CPM model.
func NewClassifier(m *model.Model) (*Classifier, error) {
	if m.Learner != "cpm" {
		return nil, fmt.Errorf("sgd: model learner %q is not cpm", m.Learner)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if m.Multiclass {
		return nil, fmt.Errorf("sgd: a CPM model cannot be all-together multiclass (use one-vs-one)")
	}
	c := &Classifier{m: m, raw: make([]float32, sparsevec.StrideFor(m.K))}
	if m.OvO {
		c.votes = make([]int, len(m.Classes))
		c.sums = make([]float64, len(m.Classes))
	}
	return c, nil
}

// polytope returns f(x) = max_k W_k x (bias included) and its argmax face
// for weight matrix w.
func (c *Classifier) polytope(w *sparsevec.Matrix, x sparsevec.Vector) (float32, int) {
	w.Scores(c.raw, x)
	row0 := w.Row(0)
	b := float32(c.m.Bias)
	best, bs := 0, float32(0)
	for k := 0; k < w.K; k++ {
		s := c.raw[k] + b*row0[k]
		if k == 0 || s > bs {
			best, bs = k, s
		}
	}
	return bs, best
}

// binary returns the decision score of the binary machine whose polytopes
// start at Weights[i]: f_outer(x) for one side, f_outer(x) - f_inner(x) for
// two; and the argmax face of the outer polytope.
func (c *Classifier) binary(i int, x sparsevec.Vector) (float32, int) {
	s, face := c.polytope(c.m.Weights[i], x)
	if c.m.Sides == 2 {
		s2, _ := c.polytope(c.m.Weights[i+1], x)
		s -= s2
	}
	return s, face
}

// Predict returns the predicted label of x, the decision score and the
// assigned face of the outer polytope. For a binary model the label is
// Classes[0] (the outer label) when the score is > 0. For one-vs-one the
// score is the winner's number of votes and face is -1; ties in votes go to
// the class with the larger sum of pairwise margins in its favour, then to
// the smaller label, so predictions are deterministic (the paper breaks
// ties at random). Features beyond the model's rows have zero weight.
// Predict does not allocate.
func (c *Classifier) Predict(x sparsevec.Vector) (label float32, score float32, face int) {
	x = x.Below(c.m.D)
	if !c.m.OvO {
		s, f := c.binary(0, x)
		c.last = s
		if s > 0 {
			return c.m.Classes[0], s, f
		}
		return c.m.Classes[1], s, f
	}
	c.vote(x)
	best := 0
	for k := 1; k < len(c.votes); k++ {
		if c.votes[k] > c.votes[best] || (c.votes[k] == c.votes[best] && c.sums[k] > c.sums[best]) {
			best = k
		}
	}
	return c.m.Classes[best], float32(c.votes[best]), -1
}

// vote sets c.votes and c.sums to the one-vs-one votes and the sums of the
// pairwise margins in each class's favour.
func (c *Classifier) vote(x sparsevec.Vector) {
	clear(c.votes)
	clear(c.sums)
	pi := 0 // pairs (i, j) in model order, as Pairs lists them
	for i := range len(c.votes) {
		for j := i + 1; j < len(c.votes); j++ {
			s, _ := c.binary(pi*c.m.Sides, x)
			pi++
			if s > 0 {
				c.votes[i]++
			} else {
				c.votes[j]++
			}
			c.sums[i] += float64(s)
			c.sums[j] -= float64(s)
		}
	}
}

// Clone returns a classifier of c's model with scratch space of its own,
// for another goroutine: it shares the model's weights, read-only, and
// skips NewClassifier's validation, which c's model passed.
func (c *Classifier) Clone() *Classifier {
	d := &Classifier{m: c.m, raw: make([]float32, len(c.raw))}
	if c.votes != nil {
		d.votes = make([]int, len(c.votes))
		d.sums = make([]float64, len(c.sums))
	}
	return d
}
