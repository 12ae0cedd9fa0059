package model

// Calibration maps a model's decision values to probabilities, fitted on
// held-out rows at training time (cpm train --calibrate). Method "platt"
// is Platt's sigmoid: for decision value s of score i,
//
//	P_i(s) = 1 / (1 + exp(A[i]·s + B[i]))
//
// A binary model has one pair (the probability of Classes[0]); a
// multiclass model has one pair per class, and a prediction normalises
// the C sigmoids to sum to 1.
type Calibration struct {
	Method  string    // "platt"
	A, B    []float64 // finite; len 1 (binary) or len(Classes)
	Rows    int64     // held-out rows it was fitted on
	LogLoss float64   // mean log-loss on those rows
}
