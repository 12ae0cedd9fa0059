// Package assign implements ASSIGN, the entropy-driven heuristic that picks
// which face of a convex polytope a margin-violating positive instance
// updates (Kantchelian et al., "Large-Margin Convex Polytope Machine",
// NIPS 2014, Algorithm 2).
//
// Let n_k be the number of positive instances whose unadjusted assignment
// argmax_k W_k x is face k, n = Σ n_k, and
//
//	H = -Σ_k (n_k/n) ln(n_k/n) = ln n - S/n,   S = Σ_k n_k ln n_k
//
// the entropy (in nats) of that empirical distribution. ASSIGN keeps the
// dictionary UNADJ from each positive instance seen so far to its last
// unadjusted assignment. For a new call on x with natural choice k_unadj:
// if the entropy of UNADJ + (x, k_unadj) is at least the target h, it
// returns k_unadj; otherwise it returns the highest-scoring face among those
// whose choice would raise the entropy above its current value. Either way
// UNADJ records (x, k_unadj).
//
// Because UNADJ + (x, k) differs from UNADJ in at most two counts, every
// candidate entropy is computed from S and n in O(1); nothing is ever
// recomputed over all K faces except the unavoidable scan of the K scores.
package assign
