//go:build amd64 && !purego

package kvec

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels. math.Exp takes its FMA path when the
// CPU has AVX and FMA, which AVX2+FMA implies, so the asm mirrors that
// path. Only tests change it.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expAVX2 sets x[i] = math.Exp(x[i]) for the whole blocks of 4 from the
// start of x, and returns how many values it did: it stops before the
// first block with a value outside [-700, 700] that is not below -800
// (whose exponential is +0), or NaN, and before a last partial block.
//
//go:noescape
func expAVX2(x []float64) (done int)

// addAVX2 sets dst[i] += src[i], or dst[i] -= src[i] if sub, for the
// first len(dst) &^ 7 values; len(src) >= len(dst).
//
//go:noescape
func addAVX2(dst, src []float64, sub bool)

// addBlocks does the first len(dst) &^ 7 values of Add (Sub if sub) and
// returns how many (0 without AVX2).
func addBlocks(dst, src []float64, sub bool) int {
	if !useAVX2 {
		return 0
	}
	addAVX2(dst, src, sub)
	return len(dst) &^ 7
}

// addScaledAVX2 sets dst[i] += float64(x[i])·a for the first len(dst) &^ 7
// values with VMULPD then VADDPD; len(x) >= len(dst).
//
//go:noescape
func addScaledAVX2(dst []float64, x []float32, a float64)

// addScaledBlocks does dst[:n] += x[:n]·a for n a multiple of 8 and
// returns n (0 without AVX2).
func addScaledBlocks(dst []float64, x []float32, a float64) int {
	if !useAVX2 {
		return 0
	}
	addScaledAVX2(dst, x, a)
	return len(dst) &^ 7
}

// addScaledColsAVX2 sets dst[i] += float64(x[offs[k]+i])·a[k] for each
// column k in turn, for every i < len(dst), starting from dst[i] = +0
// if zero; len(a) >= len(offs) and offs[k] + len(dst) <= len(x) for
// every k.
//
//go:noescape
func addScaledColsAVX2(dst []float64, x []float32, offs []int, a []float64, zero bool)

// addScaledColsBlocks does AddScaledCols (SetScaledCols if zero) and
// reports true, or reports false without AVX2.
func addScaledColsBlocks(dst []float64, x []float32, offs []int, a []float64, zero bool) bool {
	if !useAVX2 {
		return false
	}
	addScaledColsAVX2(dst, x, offs, a, zero)
	return true
}

// rbfAVX2 sets dst[i] = math.Exp(RBFArg(dst[i], xx[i], yy, gamma)) for
// the whole blocks of 4 from the start of dst, stopping before a block
// whose exponents expAVX2 would stop at, and returns how many values it
// did; len(xx) >= len(dst).
//
//go:noescape
func rbfAVX2(dst, xx []float64, yy, gamma float64) (done int)

// rbfBlocks does the vector part of RBFKernel and returns how many values
// from the start of dst it did (a multiple of 4, possibly 0).
func rbfBlocks(dst, xx []float64, yy, gamma float64) int {
	if !useAVX2 {
		return 0
	}
	return rbfAVX2(dst, xx, yy, gamma)
}

// rbfDotAVX2 is rbfAVX2 that also adds float64(alpha[i])·dst[i] to acc
// for every value it does, in index order; it returns how many values it
// did and the sum. len(xx), len(alpha) >= len(dst).
//
//go:noescape
func rbfDotAVX2(dst, xx []float64, yy, gamma float64, alpha []float32, acc float64) (done int, sum float64)

// rbfDotBlocks does the vector part of RBFDot from acc and returns how
// many values from the start of dst it did (a multiple of 4, possibly 0)
// and the sum.
func rbfDotBlocks(dst, xx []float64, yy, gamma float64, alpha []float32, acc float64) (int, float64) {
	if !useAVX2 {
		return 0, acc
	}
	return rbfDotAVX2(dst, xx, yy, gamma, alpha, acc)
}

// expBlocks returns how many values from the start of x were set to their
// exponential (a multiple of 4, possibly 0).
func expBlocks(x []float64) int {
	if !useAVX2 {
		return 0
	}
	return expAVX2(x)
}
