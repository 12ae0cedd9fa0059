// Package kvec holds the vector kernels of the kernel perceptron, each
// bit-identical to the scalar loop it replaces: an in-place exponential
// (math.Exp), the RBF kernel values of a row of inner products (alone or
// with their sum weighted by float32 coefficients),
// dst += float64(x)·a with the product and the sum each rounded (for one
// column x, or for several in turn in one pass over dst), and the
// element-wise sum and difference of float64 slices. On
// amd64 with AVX2 (and FMA, for Exp) they work on four values at a time;
// IEEE arithmetic rounds each lane exactly as the scalar operation.
//
// The Go code rounds products explicitly (float64(x·y)) where a multiply
// meets an add, which the Go specification says keeps the compiler from
// fusing them into an FMA. On amd64 the compiler fuses nothing with the
// default GOAMD64=v1, the build the results are checked with; with
// GOAMD64=v3 it fuses some expressions, and the differential tests here
// then find its scalar references rounding differently in places.
package kvec

import "math"

// Exp sets x[i] = math.Exp(x[i]) for every i, bit for bit: on amd64 with
// AVX2 and FMA four values at a time by the same sequence of operations
// as math.Exp there (a port of its FMA path), elsewhere by math.Exp.
func Exp(x []float64) {
	for len(x) > 0 {
		x = x[expBlocks(x):]
		m := min(len(x), 4)
		for i, v := range x[:m] {
			x[i] = math.Exp(v)
		}
		x = x[m:]
	}
}

// RBFArg returns the exponent of the RBF kernel from the inner product
// dot = x·y and the squared norms xx = ‖x‖², yy = ‖y‖²:
//
//	‖x−y‖² = xx + yy − 2·dot, clamped at 0 against rounding;  −‖x−y‖²·γ.
//
// The conversions keep the compiler from fusing 2·dot into the
// subtraction (see the package comment; 2·dot is exact, so a fused
// subtraction would round the same).
func RBFArg(dot, xx, yy, gamma float64) float64 {
	d2 := float64(xx+yy) - float64(2*dot)
	if d2 < 0 {
		d2 = 0
	}
	return -d2 * gamma
}

// RBFKernel sets dst[r] = math.Exp(RBFArg(dst[r], xx[r], yy, gamma)) for
// every r, bit for bit (on amd64 with AVX2 and FMA four at a time, as
// Exp). It panics if len(xx) < len(dst).
func RBFKernel(dst, xx []float64, yy, gamma float64) {
	xx = xx[:len(dst)]
	for len(dst) > 0 {
		n := rbfBlocks(dst, xx, yy, gamma)
		dst, xx = dst[n:], xx[n:]
		m := min(len(dst), 4)
		for i, dot := range dst[:m] {
			dst[i] = math.Exp(RBFArg(dot, xx[i], yy, gamma))
		}
		dst, xx = dst[m:], xx[m:]
	}
}

// RBFDot does RBFKernel(dst, xx, yy, gamma) and returns
//
//	Σ_i float64(alpha[i])·dst[i]
//
// added in index order to +0, each product rounded: bit for bit that
// scalar loop run after RBFKernel, in one pass (on amd64 with AVX2 and
// FMA the additions, one chain, overlap the exponentials of the values
// after them). It panics if len(xx) or len(alpha) < len(dst).
func RBFDot(dst, xx []float64, yy, gamma float64, alpha []float32) float64 {
	xx, alpha = xx[:len(dst)], alpha[:len(dst)]
	var acc float64
	for len(dst) > 0 {
		var n int
		n, acc = rbfDotBlocks(dst, xx, yy, gamma, alpha, acc)
		dst, xx, alpha = dst[n:], xx[n:], alpha[n:]
		m := min(len(dst), 4)
		for i, dot := range dst[:m] {
			k := math.Exp(RBFArg(dot, xx[i], yy, gamma))
			dst[i] = k
			acc += float64(float64(alpha[i]) * k)
		}
		dst, xx, alpha = dst[m:], xx[m:], alpha[m:]
	}
	return acc
}

// AddScaled sets dst[i] += float64(x[i])·a for every i < len(dst): the
// product rounded to float64, then the sum. It panics if len(x) <
// len(dst).
func AddScaled(dst []float64, x []float32, a float64) {
	x = x[:len(dst)]
	n := addScaledBlocks(dst, x, a)
	addScaledGeneric(dst[n:], x[n:], a)
}

// AddScaledCols does AddScaled(dst, x[offs[k]:], a[k]) for each k in
// turn, column k of x being the len(dst) values from offs[k]: every
// dst[i] gets the rounded products of its columns added in column order,
// bit for bit as the separate calls, in one pass over dst instead of one
// per column. It panics if len(a) < len(offs) or a column runs past the
// end of x.
func AddScaledCols(dst []float64, x []float32, offs []int, a []float64) {
	addScaledCols(dst, x, offs, a, false)
}

// SetScaledCols is clear(dst) followed by AddScaledCols(dst, x, offs, a),
// bit for bit, in one pass that does not read dst.
func SetScaledCols(dst []float64, x []float32, offs []int, a []float64) {
	addScaledCols(dst, x, offs, a, true)
}

func addScaledCols(dst []float64, x []float32, offs []int, a []float64, zero bool) {
	a = a[:len(offs)]
	for _, o := range offs {
		_ = x[o : o+len(dst)]
	}
	if len(offs) > 0 && addScaledColsBlocks(dst, x, offs, a, zero) {
		return
	}
	if zero {
		clear(dst)
	}
	for k, o := range offs {
		addScaledGeneric(dst, x[o:o+len(dst)], a[k])
	}
}

func addScaledGeneric(dst []float64, x []float32, a float64) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] += float64(float64(v) * a)
	}
}

// Add sets dst[i] += src[i] for every i < len(dst). It panics if len(src)
// < len(dst).
func Add(dst, src []float64) {
	src = src[:len(dst)]
	n := addBlocks(dst, src, false)
	for i := n; i < len(dst); i++ {
		dst[i] += src[i]
	}
}

// Sub sets dst[i] -= src[i] for every i < len(dst). It panics if len(src)
// < len(dst).
func Sub(dst, src []float64) {
	src = src[:len(dst)]
	n := addBlocks(dst, src, true)
	for i := n; i < len(dst); i++ {
		dst[i] -= src[i]
	}
}
