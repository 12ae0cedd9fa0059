package cv

import (
	"cmp"
	"math/bits"
	"math/rand/v2"
	"slices"
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
// PCG.Uint64 with Lemire's multiply-and-reject method written here, not
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
		shuffle(src, group)
		f(group)
		lo = hi
	}
}

// shuffle permutes a uniformly at random (Fisher–Yates: for i from the end,
// swap a[i] with a[j], j uniform in [0, i]).
func shuffle(src *rand.PCG, a []int) {
	for i := len(a) - 1; i > 0; i-- {
		j := uintN(src, uint64(i)+1)
		a[i], a[j] = a[j], a[i]
	}
}

// uintN returns a uniform integer in [0, n), n > 0, by Lemire's method
// ("Fast Random Integer Generation in an Interval", ACM TOMACS 2019): the
// high word of x·n, rejecting the low words below 2^64 mod n.
func uintN(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// SplitSeed returns the seed Run passes to Splits for repetition rep:
//
//	SplitSeed(seed, rep) = FitSeed(seed, rep, -1)
//
// Call Splits(data.Labels, folds, SplitSeed(cfg.Seed, rep)) to reproduce
// the folds of one repetition of Run.
func SplitSeed(seed uint64, rep int) uint64 { return FitSeed(seed, rep, -1) }

// FitSeed returns the seed Run passes to Fit for fold fold of repetition
// rep. With splitmix64 the SplitMix64 output function (Steele, Lea and
// Flood, OOPSLA 2014),
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
	return splitmix64(splitmix64(splitmix64(seed)^uint64(rep)) ^ uint64(fold))
}

func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
