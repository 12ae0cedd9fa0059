package cv

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/polyhedral/cpm/internal/rng"
)

// splitStream is the PCG stream (its second seed word) of every split.
const splitStream = 0x63762d73706c6974 // "cv-split"

// Splits returns, for one repetition, the fold number in [0, folds) of
// every row: a seeded stratified split.
//
// The rows are grouped by label, labels in ascending order (cmp.Compare
// order, so all NaN labels form one group that comes first). The rows of
// each group are shuffled by a Fisher–Yates shuffle driven by
// rand.NewPCG(seed, 0x63762d73706c6974), one generator for the whole split,
// and then dealt round-robin to folds 0, 1, ..., folds-1, 0, ...; the deal
// continues across groups rather than restarting at fold 0. Hence every
// label's rows are spread over the folds as evenly as possible (the counts
// of a label differ by at most one between folds) and the fold sizes differ
// by at most one.
//
// Stratification is best effort: a label with fewer rows than folds leaves
// some folds without it. Folds greater than len(labels) leave some folds
// empty (Run rejects that). The shuffle draws bounded integers from
// PCG.Uint64 with Lemire's multiply-and-reject method (rng.Shuffle), not
// with rand.Rand, so a seed gives the same split on every Go version.
//
// It panics if folds < 1.
func Splits(labels []float32, folds int, seed uint64) []int {
	if folds < 1 {
		panic("cv: Splits with folds < 1")
	}
	assign := make([]int, len(labels))
	deal := 0
	shuffledGroups(labels, rand.NewPCG(seed, splitStream), func(group []int) {
		for _, r := range group {
			assign[r] = deal
			if deal++; deal == folds {
				deal = 0
			}
		}
	})
	return assign
}

// shuffledGroups calls f with the row numbers of each label of labels, in
// ascending cmp.Compare order of the labels, after shuffling them with src
// (one generator for all groups, drawn in that order).
func shuffledGroups(labels []float32, src *rand.PCG, f func(group []int)) {
	n := len(labels)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(labels[a], labels[b]) })
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && cmp.Compare(labels[order[hi]], labels[order[lo]]) == 0 {
			hi++
		}
		group := order[lo:hi]
		rng.Shuffle(src, group)
		f(group)
		lo = hi
	}
}

// SplitSeed returns the seed Run passes to Splits for repetition rep:
//
//	SplitSeed(seed, rep) = FitSeed(seed, rep, -1)
//
// Call Splits(data.Labels, folds, SplitSeed(cfg.Seed, rep)) to reproduce
// the folds of one repetition of Run.
func SplitSeed(seed uint64, rep int) uint64 { return FitSeed(seed, rep, -1) }

// FitSeed returns the seed Run passes to Fit for fold fold of repetition
// rep. With splitmix64 the output of one SplitMix64 step (Steele, Lea and
// Flood, OOPSLA 2014; rng.SplitMix64),
//
//	splitmix64(z) = mix(z + 0x9e3779b97f4a7c15), where
//	mix(z)        = z ^= z>>30; z *= 0xbf58476d1ce4e5b9;
//	                z ^= z>>27; z *= 0x94d049bb133111eb; z ^ z>>31
//
// it is
//
//	splitmix64(splitmix64(splitmix64(seed) ^ uint64(rep)) ^ uint64(fold))
//
// with rep and fold converted as two's-complement integers.
func FitSeed(seed uint64, rep, fold int) uint64 {
	return rng.SplitMix64(rng.SplitMix64(rng.SplitMix64(seed)^uint64(rep)) ^ uint64(fold))
}
