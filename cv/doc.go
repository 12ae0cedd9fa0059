// Package cv runs repeated stratified k-fold cross-validation, the protocol
// behind the tables of the papers this project implements.
//
// Manwani and Sastry ("Polyceptron: A Polyhedral Learning Algorithm",
// section 4.3 and Table 2) report 10 repetitions of 10-fold cross-validation:
// the mean and standard deviation over repetitions of accuracy, training
// time and number of hyperplanes. Xu and Zhang ("A Multiclass Kernel
// Perceptron Algorithm", Tables II and III) report training and test error
// of 10-fold cross-validation with features scaled to [0,1], their ± taken
// over folds. Run computes both kinds of spread (see Result).
//
// One repetition:
//
//  1. Splits assigns every row to one of k folds, stratified by label.
//  2. For each fold f, the rows outside f are copied into a training CSR and
//     the rows of f into a test CSR (no dense copies).
//  3. Fit trains on the training CSR; its wall time is recorded. A learner
//     that scales its features (package scale, learner.Spec.Scale) fits the
//     scaling inside Fit, on the training CSR only, so no statistic of the
//     test fold reaches it.
//  4. The predictor labels every test row and every training row; a
//     prediction is correct when it equals the row's label exactly.
//
// The fits of all repetitions and folds run in parallel on Config.Workers
// goroutines and their results are stored by (repetition, fold), so every
// number of a Result except the timings is the same for any Workers.
//
// Randomness: repetition r splits with seed SplitSeed(Config.Seed, r) and
// the fit of fold f of repetition r gets FitSeed(Config.Seed, r, f). Both
// are fixed functions of their arguments (documented on them), and the
// shuffle is the Fisher–Yates of internal/rng over a math/rand/v2 PCG
// (rng.Shuffle, Lemire's bounded draws), so splits do not change with the
// Go version.
package cv
