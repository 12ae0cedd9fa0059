// Package tune searches a learner's hyperparameters over a grid.
//
// A grid (ParseGrid) is a list of axes, each a learner flag and its values
// — numbers, expressions over the other axes ("entropy=0,ln(0.5K)"),
// log-ranges ("lambda=1e-7..1e-3x5"), whole-number ranges, or text for
// text flags. Each point of the grid is the caller's base flags with every
// axis set, so a point configures its learner exactly as the same flags do
// on the command line of cpm train and cpm cv (learner.Build).
//
// Search scores every point by repeated stratified k-fold
// cross-validation, fold for fold as cv.Run does it (same splits, same
// per-fit seeds, so the same figures), or on a validation set with several
// learner seeds as replicates. The fits of all points share one pool of
// workers, and each fit depends only on its point and its number, so the
// results are the same for any number of workers. Choose picks a point by
// a stated Rule; PaperSearch is the CPM paper's own search (section 5.1).
package tune
