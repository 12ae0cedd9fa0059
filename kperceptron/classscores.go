package kperceptron

import "github.com/polyhedral/cpm/sparsevec"

// ClassScores writes x's decision values into dst; see LastScores.
func (kp *Predictor) ClassScores(x sparsevec.Vector, dst []float32) {
	kp.Predict(x)
	kp.LastScores(dst)
}

// LastScores writes the decision values of the row last given to Predict
// into dst: for a multiclass model f_i(x) of every class Classes[i],
// whose argmax Predict returns; for a binary model dst[0] = f(x),
// Predict's score. Each value is the float64 sum rounded to float32 once.
// dst must have len(Classes) entries (1 for a binary model). It does not
// allocate.
func (kp *Predictor) LastScores(dst []float32) {
	for i, f := range kp.scores {
		dst[i] = float32(f)
	}
}
