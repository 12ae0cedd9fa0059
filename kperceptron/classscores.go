package kperceptron

import "github.com/polyhedral/cpm/sparsevec"

// ClassScores writes x's decision values into dst: for a multiclass model
// f_i(x) of every class Classes[i], whose argmax Predict returns; for a
// binary model dst[0] = f(x), Predict's score. Each value is the float64
// sum rounded to float32 once. dst must have len(Classes) entries (1 for a
// binary model). It does not allocate.
func (kp *Predictor) ClassScores(x sparsevec.Vector, dst []float32) {
	for i, f := range kp.decisions(x) {
		dst[i] = float32(f)
	}
}
