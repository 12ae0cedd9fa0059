// Package sgd trains Convex Polytope Machines (Kantchelian, Tschantz, Huang,
// Bartlett, Joseph and Tygar, "Large-Margin Convex Polytope Machine",
// NIPS 2014) by stochastic sub-gradient descent, and predicts with them.
// The other learners of the module live in packages of their own
// (perceptron, kperceptron, polyceptron, plume).
//
// A polytope is a K×d matrix W with score f(x) = max_k W_k·x; points with
// f(x) > 0 lie outside the polytope and are labelled with the outer label.
// Training minimises (paper, section 4)
//
//	Σ_{y=-1} Σ_k [1 + W_k x]_+  +  Σ_{y=+1} [1 - W_{z(x)} x]_+  +  λ‖W‖²
//
// with Algorithm 1 (SGDTRAIN) and the ASSIGN heuristic of Algorithm 2
// (package assign). Double-sided CPM (section 3.1) trains a second polytope
// with the labels swapped and scores f_-(x) - f_+(x); one-vs-one multiclass
// (section 5.3) trains C(C-1)/2 binary machines and takes a majority vote.
//
// Where this package deviates from, or pins down, the paper:
//
//   - Step size and shrink order. η_t = 1/(λt) with t = 1, 2, ... counting
//     SGD steps, as Pegasos (Shalev-Shwartz et al., ICML 2007). The paper's
//     Algorithm 1 applies the shrink W ← (1-η_tλ)W after the update; with
//     t starting at 1 that factor is 0 and would erase the first update.
//     We follow Pegasos: the margin test and the sub-gradient use W_t, and
//     W_{t+1} = (1-η_tλ)W_t + η_t·g_t, so the first step sets W to η_1·g_1.
//   - Lazy scaling. W is stored as s·V: the shrink multiplies the scalar s
//     (O(1)), an update adds (η_t/s)·x to V (O(nnz·faces)). With this
//     schedule s_t = 1/t, so V never underflows in practice; still, s is
//     folded into V whenever it falls below 2^-20 and before the weights
//     are read.
//   - Bias. Each row is augmented with a constant feature (value Config.Bias,
//     default 1) stored as row 0 of W and regularised like every other
//     weight, as the paper's "constant unitary component".
//   - Where ASSIGN runs. Algorithm 1 calls ASSIGN only inside
//     "if W_z x < 1", so UNADJ records only positives that violate the
//     margin under their argmax face; section 4 defines the entropy over
//     D+, "all positive instances", and the authors' released tool runs its
//     heuristic on every positive row (updating the returned face if its
//     score is below 1). We follow Algorithm 1 as printed; on the
//     one-vs-one MNIST validation split the two placements agree within
//     the split's noise (bench/RESULTS.md). What matters is the target
//     h: section 5.1's grid "log K/10, ..., log 9K/10" read as ln(iK/10),
//     an even spread over iK/10 faces, not (i/10)·ln K (see `cpm bench cpm-table --tune`).
//   - Cost ratio. Negative rows' steps are multiplied by CostRatio (the
//     weight of the negative hinge terms relative to the positive ones).
//   - Row order. "Pick (x, y) ∈ D" is a seeded permutation: in-memory data is
//     shuffled once by copying it in the new order (so an epoch reads memory
//     sequentially) and that order repeats each epoch unless
//     Config.Reshuffle draws a fresh permutation per epoch.
//   - Warm start (Config.Init). Training may continue from a saved model:
//     each polytope starts from its weights with the step counter t of the
//     run that made it (model.Model.StepsOf), so η_t = 1/(λt) continues
//     to decrease. Restarting t at 1 would make the first shrink factor
//     1 - η_1λ = 0 and erase the model. λ itself is a hyperparameter of
//     the new run; the paper's λ = 1/(C·T) depends on this run's T, so a
//     warm start should fix λ explicitly (usually to the old model's).
//     The ASSIGN dictionary is not stored in models and starts empty.
//   - Checkpoints (Config.Checkpoint). A run can be checkpointed and
//     resumed so that the final model is bit-identical to an uninterrupted
//     run; see Checkpointing for what a checkpoint holds and its format.
//   - One-vs-one ties. The paper breaks voting ties at random; Classifier
//     gives them to the class with the larger sum of pairwise margins, then
//     the smaller label, so predictions are deterministic.
package sgd
