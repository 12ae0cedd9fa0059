package rng

import (
	"math/bits"
	"math/rand/v2"
)

// Gamma is SplitMix64's increment γ, the odd integer nearest 2^64/φ with φ
// the golden ratio.
const Gamma = 0x9e3779b97f4a7c15

// SplitMix64Finalizer is SplitMix64's output function (see the package
// documentation): a bijection of uint64 that spreads nearby inputs over
// unrelated outputs.
func SplitMix64Finalizer(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// SplitMix64 returns the output of one SplitMix64 step from state s:
// SplitMix64Finalizer(s + Gamma).
func SplitMix64(s uint64) uint64 { return SplitMix64Finalizer(s + Gamma) }

// SplitMix64At returns the i-th output, counting from 0, of the SplitMix64
// generator whose state starts at s: SplitMix64Finalizer(s + (i+1)·Gamma).
// It is a pure function of (s, i), so a value never depends on the order in
// which outputs are asked for.
func SplitMix64At(s, i uint64) uint64 { return SplitMix64Finalizer(s + (i+1)*Gamma) }

// Uniform returns an integer drawn uniformly from [0, n) with src, by
// Lemire's method ("Fast Random Integer Generation in an Interval", ACM
// TOMACS 2019): the high word of u·n for a draw u, drawing again while the
// low word is below 2^64 mod n. It panics if n is 0.
func Uniform(src *rand.PCG, n uint64) uint64 {
	if n == 0 {
		panic("rng: Uniform with n = 0")
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// Shuffle permutes p by Fisher–Yates, drawing each index with Uniform: one
// or, rarely, more draws of src per element after the first.
func Shuffle[E any](src *rand.PCG, p []E) {
	for i := len(p) - 1; i > 0; i-- {
		j := Uniform(src, uint64(i)+1)
		p[i], p[j] = p[j], p[i]
	}
}

// IndexMod returns src.Uint64() mod n, an integer in [0, n) from exactly
// one draw, with a bias below n/2^64. It panics if n is 0.
func IndexMod(src *rand.PCG, n uint64) uint64 { return src.Uint64() % n }

// ShuffleMod permutes p by Fisher–Yates, drawing each index with
// IndexMod(src, i+1): exactly one draw of src per element after the first.
// The modulo bias is below len(p)/2^64.
func ShuffleMod[E any](src *rand.PCG, p []E) {
	for i := len(p) - 1; i > 0; i-- {
		j := IndexMod(src, uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
}
