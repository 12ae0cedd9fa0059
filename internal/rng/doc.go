// Package rng holds the random-number helpers whose outputs are part of the
// module's files: the SplitMix64 mixing functions that derive seeds, bucket
// numbers and stream keys, and the Fisher–Yates shuffles that order rows.
//
// Every function is written out rather than taken from math/rand/v2. The
// generator itself is rand.PCG (PCG-DXSM, a fixed algorithm), but
// rand.Shuffle, rand.Perm and rand.IntN are free to change their reduction
// of a 64-bit draw to an index from one Go release to the next, and a
// changed shuffle changes which rows a seed draws, hence every model file
// and data file derived from it. The functions here depend only on their
// arguments and on PCG's output stream, so a seed gives the same bytes with
// every Go release.
//
// # SplitMix64
//
// SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number
// Generators", OOPSLA 2014) keeps a 64-bit state s, adds the odd constant
// γ = Gamma = ⌊2^64/φ⌋ (φ the golden ratio, made odd) per step and outputs
// the finalizer of the new state:
//
//	s ← s + γ (mod 2^64)
//	SplitMix64Finalizer(z) = z₃, where
//	    z₁ = (z  ⊕ z  ≫ 30) · 0xbf58476d1ce4e5b9
//	    z₂ = (z₁ ⊕ z₁ ≫ 27) · 0x94d049bb133111eb
//	    z₃ =  z₂ ⊕ z₂ ≫ 31
//
// (Stafford's "Mix13" variant of the MurmurHash3 finalizer; all products
// mod 2^64.) SplitMix64Finalizer is a bijection of uint64 whose output bits
// each depend on every input bit. With F = SplitMix64Finalizer,
// SplitMix64(s) = F(s + γ) is the output of one generator step from state
// s, and SplitMix64At(s, i) = F(s + (i+1)·γ) is the i-th output (from 0) of
// the generator started at s, computed without the i steps before it.
//
// # Shuffles
//
// Both shuffles are Fisher–Yates (Knuth, TAOCP vol. 2, Algorithm 3.4.2P):
// for i from len(p)-1 down to 1, swap p[i] with p[j], j drawn from [0, i].
// They differ in how j is drawn from a 64-bit PCG output u:
//
//	ShuffleMod:  j = IndexMod(src, i+1) = u mod (i+1)  (bias below (i+1)/2^64)
//	Shuffle:     j = Uniform(src, i+1)                 (exactly uniform, Lemire's method)
//
// The two give different permutations of the same seed; each package keeps
// the one its files were made with.
package rng
