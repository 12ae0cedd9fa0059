package perceptron

import (
	"fmt"

	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Learner is the learner name of perceptron model files.
const Learner = "perceptron"

// Predictor predicts with a perceptron model, binary or multiclass. It
// holds scratch space: make one per goroutine.
type Predictor struct {
	m    *model.Model
	l    *linear.Machine
	last []float32 // the scores of the last row predicted (the machine's scratch)
}

// NewPredictor returns a predictor for m, a valid model of learner
// "perceptron".
func NewPredictor(m *model.Model) (*Predictor, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if m.Learner != Learner {
		return nil, fmt.Errorf("perceptron: model learner %q is not %q", m.Learner, Learner)
	}
	want := 1
	if m.Multiclass {
		want = len(m.Classes)
	}
	if m.K != want {
		return nil, fmt.Errorf("perceptron: perceptron model with %d labels has K = %d, want %d", len(m.Classes), m.K, want)
	}
	l, err := linear.ViewModel(m, "perceptron")
	if err != nil {
		return nil, err
	}
	return &Predictor{m: m, l: l}, nil
}

// Predict returns the predicted label of x, its decision score and a face:
//
//   - binary: score w·x̃, label Classes[0] when it is > 0, face 0;
//   - multiclass: face argmax_i f_i(x) (ties to the lowest class index),
//     its label and its score.
//
// Features beyond the model's rows have zero weight. Predict does not
// allocate once its lift scratch has grown to the longest row.
func (c *Predictor) Predict(x sparsevec.Vector) (label float32, score float32, face int) {
	s := c.l.Scores(c.l.Prepare(x))
	c.last = s
	if c.m.Multiclass {
		face = maxFaceExcept(s, -1)
		return c.m.Classes[face], s[face], face
	}
	if s[0] > 0 {
		return c.m.Classes[0], s[0], 0
	}
	return c.m.Classes[1], s[0], 0
}
