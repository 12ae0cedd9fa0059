// Package calibrate turns a classifier's decision values into
// probabilities: Platt's sigmoid fitted on held-out rows, for one score
// (binary) or one score per class (one-vs-rest, normalised).
//
// # Platt's sigmoid
//
// For decision values f_1..f_n of held-out rows and labels y_i ∈ {+1, −1}
// (+1: the class whose probability is modelled), Platt (1999) models
//
//	P(y = +1 | f) = 1 / (1 + exp(A·f + B))
//
// and fits (A, B) by maximum likelihood against smoothed targets
//
//	t_i = (N₊ + 1)/(N₊ + 2)  for y_i = +1,   t_i = 1/(N₋ + 2)  for y_i = −1,
//
// N₊ and N₋ the numbers of positive and negative rows: a prior that keeps
// the fit finite on separable rows. The objective is the cross-entropy
//
//	F(A, B) = Σ_i [ t_i·(A f_i + B) + log(1 + exp(−(A f_i + B))) ]
//
// (each term written, for numerical safety, as
// (t_i − 1)(A f_i + B) + log(1 + exp(A f_i + B)) when A f_i + B < 0). FitSigmoid
// minimises it by the method of Lin, Lin and Weng, "A note on Platt's
// probabilistic outputs for support vector machines", Machine Learning
// 68(3):267–276, 2007, Algorithm 1 (as LIBSVM's sigmoid_train implements
// it): start from A = 0, B = log((N₋ + 1)/(N₊ + 1)); take Newton steps
// on (A, B) with the Hessian
//
//	H = [ Σ f_i² p_i q_i + σ   Σ f_i p_i q_i     ]
//	    [ Σ f_i p_i q_i        Σ p_i q_i + σ     ],  p_i = P(y=+1|f_i), q_i = 1 − p_i,
//
// σ = 10⁻¹² keeping H positive definite, the gradient
// g = (Σ f_i (t_i − p_i), Σ (t_i − p_i)); backtrack the step size 1, 1/2,
// 1/4, … down to 10⁻¹⁰ until F decreases by at least 10⁻⁴ · step ·
// (g·Δ) (Armijo's condition); stop when both gradient entries are below
// 10⁻⁵ in magnitude, after 100 iterations, or when no step size
// decreases F.
//
// # Several classes
//
// A model with C > 2 classes gives one decision value per class (its
// one-vs-rest or vote-based scores). Fit fits one sigmoid per class k on
// that class's score, rows of class k positive and all others negative,
// and Probabilities normalises the C sigmoids of a row to sum to 1
// (uniform when they are all 0), as scikit-learn's CalibratedClassifierCV
// does for multiclass data (sklearn/calibration.py,
// _CalibratedClassifier.predict_proba).
//
// # Log-loss
//
// LogLoss is −log p of the true class's probability p, with p clipped to
// [10⁻¹⁵, 1 − 10⁻¹⁵] so that one confident mistake costs at most
// log(10¹⁵) ≈ 34.5 nats instead of infinity (the clipping of
// scikit-learn's log_loss before its eps="auto").
package calibrate
