package polyceptron

import (
	"fmt"

	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Learner names of Polyceptron model files.
const (
	Online = "polyceptron-online"
	Batch  = "polyceptron-batch"
)

// Predictor predicts with a Polyceptron model. It holds scratch space:
// make one per goroutine.
type Predictor struct {
	m *model.Model
	l *linear.Machine
}

// NewPredictor returns a predictor for m, a valid model of learner
// "polyceptron-online" or "polyceptron-batch".
func NewPredictor(m *model.Model) (*Predictor, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	switch {
	case m.Learner != Online && m.Learner != Batch:
		return nil, fmt.Errorf("polyceptron: model learner %q is not %q or %q", m.Learner, Online, Batch)
	case m.Multiclass:
		return nil, fmt.Errorf("polyceptron: a Polyceptron model cannot be multiclass")
	}
	l, err := linear.ViewModel(m, "polyceptron")
	if err != nil {
		return nil, err
	}
	return &Predictor{m: m, l: l}, nil
}

// Predict returns the predicted label of x, its score h(x) = min_k w̃_k·x̃
// and its face, the argmin (ties to the lowest k): the label is
// Classes[0] (inside) when h(x) > 0. Features beyond the model's rows have
// zero weight. Predict does not allocate once its lift scratch has grown
// to the longest row.
func (c *Predictor) Predict(x sparsevec.Vector) (label float32, score float32, face int) {
	s := c.l.Scores(c.l.Prepare(x))
	face = minFace(s)
	if s[face] > 0 {
		return c.m.Classes[0], s[face], face
	}
	return c.m.Classes[1], s[face], face
}
