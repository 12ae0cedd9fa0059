// Package plume trains polyhedral classifiers as a mixture of logistic
// experts whose gate shares the experts' parameters: PLUME ("PLUME:
// Polyhedral Learning Using Mixture of Experts", arXiv:1904.09948v1, 2019;
// equation numbers below are the paper's), and its hard-gated limit SPLA1
// (Manwani and Sastry, "Learning polyhedral classifiers using logistic
// function", JMLR W&CP 13:17–30, 2010).
//
// # Model
//
// With x̃ = (b, x) (b = Config.Bias at feature row 0) and one weight column
// w̃_k per expert (the D×K sparsevec.Matrix Model.W), s_k = w̃_k·x̃ and
// y = +1 for the class inside the polyhedron (eq. 3-5):
//
//	p(y | x) = Σ_k g_k(x)·σ(y s_k),   g_k(x) = e^{−γ s_k} / Σ_j e^{−γ s_j}.
//
// As γ → ∞ the gate picks r = argmin_k s_k and p(y = +1 | x) = σ(min_k s_k):
// the polyhedral classifier h(x) = min_k s_k of eq. 1-2, positive class
// inside, the convention of polyceptron.Polyceptron. Every log-probability is
// computed stably: the gate through a log-sum-exp shifted by −γ·min s, the
// experts through log σ(z) = −log1p(e^{−z}) (z ≥ 0) or z − log1p(e^{z}).
//
// # EM (Algorithm 1)
//
// E-step: responsibilities π_k(x_n, Θᶜ) = g_k σ(y s_k) / Σ_j g_j σ(y s_j)
// (eq. 6) at the current weights Θᶜ. M-step: InnerIter ascent steps on
//
//	Q(Θ, Θᶜ) = Σ_n Σ_k π_k(x_n, Θᶜ)·[log g_k(x_n, Θ) + log σ(y_n s_k(Θ))],
//
// each along a direction d, with a backtracking (Armijo) line search: from
// a first step α₀, halve α until Q(Θ + αd) ≥ Q(Θ) + 10⁻⁴·α·gᵀd. EM stops
// when an iteration raises the log-likelihood L(Θ) = Σ_n log p(y_n | x_n)
// by less than Epsilon, or after MaxIter iterations. Directions:
//
//   - GradientAscent (eq. 7): d = g = ∇Q. α₀ is 1/‖g‖ at first and then
//     twice the last accepted step.
//   - Newton (eq. 9): d = (−H + δI)⁻¹·g with the exact Hessian H of Q,
//     α₀ = 1, Cholesky-solved with gonum/mat. δ is a small ridge (see
//     newtonSolver) because −H is only positive semidefinite. The dense
//     (dK)×(dK) Hessian is refused above Config.MaxNewtonParams (default
//     4096) with an error that suggests BFGS.
//   - BFGS (eq. 10): d = B·g with the BFGS estimate B of (−H)⁻¹, carried
//     across EM iterations as in the paper, α₀ = 1 (1/‖g‖ before B's first
//     update); B is reset to I if its direction fails the line search.
//     Capped at MaxBFGSParams.
//
// If a Newton or BFGS direction fails, a gradient step is tried; if that
// fails too the M-step ends without moving. Because every accepted step
// raises Q, the generalised-EM inequality L(Θ) − L(Θᶜ) ≥ Q(Θ, Θᶜ) −
// Q(Θᶜ, Θᶜ) makes L non-decreasing (the tests check it on real data).
// Since ∇_Θ Q(Θ, Θᶜ) = ∇L(Θᶜ) at Θ = Θᶜ, one step per M-step (the default)
// is the EM gradient algorithm (Lange, JRSS B 57, 1995), and BFGS with
// InnerIter 1 is BFGS on L with the line search on Q.
//
// We use neither gonum/optimize's BFGS nor its Linesearchers. Minimize
// restarts from B = I at every call, whereas eq. 10 carries B across EM
// iterations, whose objective Q(·, Θᶜ) changes at every E-step. It also
// runs to its own convergence tests, not a fixed InnerIter steps. The
// backtracking has to compare values of the float32 weights the model
// keeps, so it is written out (fitter.lineSearch), and eq. 10 is a dozen
// lines on plain slices (bfgsState).
//
// # SPLA1
//
// Config.Hard trains SPLA1 as the γ → ∞ limit in the same EM machinery.
// The E-step's π becomes one-hot at r_n = argmin_k s_k(Θᶜ) (ties to the
// lowest k). The hard gate is piecewise constant in Θ, so its gradient is
// zero almost everywhere and its log drops out of the M-step. Q becomes
// Σ_n log σ(y_n s_{r_n}(Θ)): K separate logistic regressions on the
// partition, which is SPLA1's M-step. Its Hessian is block diagonal.
// Taken literally, the limit of Q is −∞ wherever the partition changes,
// and EM could never reassign a point. SPLA1 reassigns, and that alone
// need not raise its likelihood L(Θ) = Σ_n log σ(y_n min_k s_k(Θ)):
// moving a positive point to a lower face lowers its σ. So our SPLA1
// line search accepts a step only if L itself satisfies the Armijo
// condition (the direction is an ascent direction of L at Θᶜ, where L and
// the partitioned objective agree to first order). L is then monotone.
// A face that ends up the argmin for no row (a dead face) gets no gradient
// under the hard gate and stays dead.
//
// # Derivation and the paper's typos
//
// With a_k = −γ s_k, log g_k = a_k − logsumexp(a), so
// Σ_k π_k ∂log g_k/∂s_j = γ(g_j − π_j) (Σ_k π_k = 1), and
// ∂log σ(y s_j)/∂s_j = y σ(−y s_j). Hence
//
//	∂Q/∂w̃_k = Σ_n [γ(g_k(x_n, Θ) − π_k(x_n, Θᶜ)) + y_n π_k(x_n, Θᶜ) σ(−y_n s_k)]·x̃_n,
//
// which is eq. 8 with its two minus signs multiplied out: the paper's signs
// are right. Q contains the gate term Σ π_k log g_k(Θ), and since the gate
// shares the experts' parameters its dependence on Θ enters the M-step;
// the paper's gradient includes it (the γ(g − π) part) and so do we.
// Differentiating again:
//
//	H_kk = −Σ_n [γ² g_k(1 − g_k) + π_k σ(s_k)σ(−s_k)]·x̃_n x̃_nᵀ
//	H_kr = +Σ_n γ² g_k g_r·x̃_n x̃_nᵀ  (r ≠ k),
//
// as printed, except for a missing parenthesis in H_kk ("g_k(1 − g_k" then
// x̃x̃ᵀ). g and σ are evaluated at Θ, π at Θᶜ. Q is concave, as the paper
// says, since Σ_k π_k log g_k = −γ π·s − logsumexp(−γ s) and log σ are
// concave in s. H is negative semidefinite, and:
//
//   - Eq. 9 prints Θᶜ⁺¹ = Θᶜ + αH⁻¹g. With H negative definite that is a
//     descent direction. The Newton ascent step is Θᶜ − αH⁻¹g =
//     Θᶜ + α(−H)⁻¹g, which we use.
//   - Eq. 10's update is the textbook BFGS inverse-Hessian update for
//     minimisation. For ascent, Δg in it must be the change of the gradient
//     of −Q. The last term's "Θᶜ Δgᶜᵀ Bᶜᵀ" should read "ΔΘᶜ Δgᶜᵀ Bᶜᵀ".
//     See bfgsState.
//
// The tests check the gradient and every Hessian block, H_kr included,
// against central finite differences, and against a dense float64
// transcription of these formulas.
//
// # Deviations and choices the paper leaves open
//
//   - Initial weights: each face k is the perpendicular bisector between
//     the mean of the inside rows and an outside row drawn with a
//     math/rand/v2 PCG seeded by Config.Seed (see initWeights), scaled so
//     scores start of order 1. The paper does not say how it initialises.
//     From Gaussian weights, GA and BFGS often end with a dead face: a
//     face that is the argmin for no row, so its gate weight and gradient
//     vanish (about 45% of seeds on a 2-D wedge, even after 1000
//     iterations). From the bisector start the wedge is learnt from 40 of
//     40 seeds by all three M-steps. With Restarts > 1 the restart with
//     the highest final L is kept.
//   - γ: the paper does not report its value; the default is 1.
//   - ε: the paper does not report it. The default is 5e-4 nats per
//     training row; 2.5e-4 to 1e-3 gave the same table within noise.
//     Without a penalty the likelihood of (nearly) separable data grows
//     without bound, so this early stop also regularises. Config.Lambda
//     adds an optional L2 penalty (off by default; not in the paper).
//   - Scores come from the float32 sparse kernel (Matrix.Scores plus the
//     bias row). Gradients are X̃ᵀc products accumulated by
//     Matrix.AddOuter in float32, folded into float64 every max(256, D)
//     rows. The Newton Hessian is accumulated in float64 over each row's
//     nonzero pairs only. X is never densified, and no pass over the rows
//     allocates.
//
// # Cross-validation
//
// TestCrossValidation runs 10 × 10-fold stratified cross-validation
// (cv.Run, Seed 1) of every M-step of PLUME and SPLA1 on Ionosphere and
// Heart with the default Config and logs accuracy and time per fit;
// bench/RESULTS.md keeps the figures next to the paper's Table 1. Run it
// with
//
//	go test -run TestCrossValidation -plume.cv -v ./plume/
package plume
