// Package polyceptron trains the online and batch Polyceptron (Naresh
// Manwani and P. S. Sastry, "Polyceptron: A Polyhedral Learning
// Algorithm"): a polyhedral classifier
//
//	h(x) = min_k w̃_k·x̃,   x̃ = (x, b)   (eq. 1)
//
// that labels Classes[0] (inside the polyhedron) when h(x) > 0, trained by
// minimising the Polyceptron criterion (eq. 3)
//
//	E_P(Θ) = −Σ_n y_n h(x_n) 1{y_n h(x_n) < 0}.
//
// TrainOnline is Algorithm 2: on a mistake only the minimising face r moves,
// w̃_r ← w̃_r + η·y·x̃ (eq. 5). TrainBatch is Algorithm 1: with the sets
// S_k = {x_n : k = argmin_j w̃_j·x̃_n} fixed, every face takes a gradient
// step on its misclassified rows, until Σ_k ‖∇_k E_P‖ < γ. The two are
// separate entries because their updates, defaults and stopping rules
// differ; the comment on each states where it departs from the printed
// pseudo-code.
//
// The positive class is inside (h = min), unlike CPM (package sgd), whose
// positive (outer) class is outside (f = max). The Polyceptron scores rows
// with the machine of package linear, bias and lifting included.
package polyceptron
