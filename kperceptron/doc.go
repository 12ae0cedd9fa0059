// Package kperceptron trains the binary and the all-together multiclass
// kernel perceptron (Jianhua Xu and Xuegong Zhang, "A Multiclass Kernel
// Perceptron Algorithm", section III):
//
//	binary:      f(x) = Σ_m α_m k(x_m, x) + β,       predict by the sign of f;
//	multiclass:  f_i(x) = Σ_m α_m^i k(x_m, x) + β_i, predict argmax_i f_i,
//
// with the linear, polynomial and RBF kernels of eq. 7-8 (Kernel). A
// mistake on row q changes only that row's coefficients, the dual form of
// the perceptron (see Perceptron for the update and for where it departs
// from the printed eq. 9 and 11). Train handles both forms, by the number
// of labels; NewPredictor predicts with a saved model, whose layout is
// documented on Perceptron.
package kperceptron
