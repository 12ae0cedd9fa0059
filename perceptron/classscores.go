package perceptron

import "github.com/polyhedral/cpm/sparsevec"

// ClassScores writes x's decision values into dst; see LastScores.
func (c *Predictor) ClassScores(x sparsevec.Vector, dst []float32) {
	c.Predict(x)
	c.LastScores(dst)
}

// LastScores writes the decision values of the row last given to Predict
// into dst: for a multiclass (Kesler) model the score f_k(x) = w_k·x̃ of
// every class Classes[k], whose argmax Predict returns; for a binary
// model dst[0] = w·x̃, Predict's score. dst must have len(Classes) entries
// (1 for a binary model). It does not allocate.
func (c *Predictor) LastScores(dst []float32) {
	if !c.m.Multiclass {
		dst[0] = c.last[0]
		return
	}
	copy(dst[:len(c.m.Classes)], c.last)
}
