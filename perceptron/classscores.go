package perceptron

import "github.com/polyhedral/cpm/sparsevec"

// ClassScores writes x's decision values into dst: for a multiclass
// (Kesler) model the score f_k(x) = w_k·x̃ of every class Classes[k], whose
// argmax Predict returns; for a binary model dst[0] = w·x̃, Predict's
// score. dst must have len(Classes) entries (1 for a binary model). It
// does not allocate once the lift scratch has grown to the longest row.
func (c *Predictor) ClassScores(x sparsevec.Vector, dst []float32) {
	s := c.l.Scores(c.l.Prepare(x))
	if !c.m.Multiclass {
		dst[0] = s[0]
		return
	}
	copy(dst[:len(c.m.Classes)], s)
}
