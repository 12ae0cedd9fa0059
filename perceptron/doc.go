// Package perceptron trains the perceptron, binary and multiclass, with
// the lifting trick (Sariel Har-Peled, lecture notes "The Perceptron
// Algorithm", sections 24.1-24.2; the multiclass form is Kesler's
// construction as Jianhua Xu and Xuegong Zhang, "A Multiclass Kernel
// Perceptron Algorithm", eq. 4-5, state it).
//
// Binary: score f(x) = w·x̃ with x̃ = (b, x) augmented by the constant bias
// feature b; a row is a mistake when y·f(x) <= 0 and moves w ← w + y·x̃.
// If the rows are separable with margin γ inside a ball of radius R (both
// measured on x̃), there are at most (R/γ)² mistakes in all (Theorem
// 24.1.1).
//
// Multiclass: f_i(x) = w_i·x̃, prediction argmax_i f_i; a row of class i
// that some j ≠ i ties or beats moves w_i ← w_i + x̃ and w_j ← w_j − x̃ for
// j = argmax_{j≠i} f_j.
//
// Lifting (section 24.2) appends z = ‖x‖² to every row, so that a linear
// separator of (1, x, y, x²+y²) is a circle in the plane; see
// linear.LiftQuadratic.
//
// Train handles both forms, by the number of labels; NewPredictor
// predicts with a saved model. Perceptron states the update rule exactly.
package perceptron
