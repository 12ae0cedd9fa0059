package sparsevec

// Pure-Go kernels: the reference every other implementation is tested
// against, and the kernels used under the purego tag, on other
// architectures and on CPUs without AVX2+FMA.
//
// Preconditions, established by the exported wrappers: len(val) ==
// len(idx), 0 < k <= stride, len(dst) == len(c) == stride, and w is the
// D·stride weights with cap(w) == len(w). Every row slice below is
// bounds-checked against w, so an index >= D panics even when x is not
// sorted.

// scoresGeneric sets dst[:k] to the scores of the k live faces and clears
// the padding dst[k:].
//
// Go keeps float32 accumulators in registers only while few values are
// live: a loop with 8 accumulators already spills one of them to the stack
// on every nonzero, which puts a store-to-load forward on its dependency
// chain. So the live columns are cut into blocks of at most 6 and every
// block is a separate pass over x with its accumulators in locals; a
// stride-16 matrix with K=10 takes a 6-column and a 4-column pass, 0.45µs
// for 150 nonzeros against 1.8µs for one pass with the sums in dst.
// Unrolling the 4- and 6-column loops over two nonzeros made the compiler
// spill again and was slower; the 1- and 2-column loops, which are bound
// by the latency of their one or two addition chains, are unrolled.
func scoresGeneric(dst, w []float32, k int, idx []uint32, val []float32) {
	stride := len(dst)
	b := 0
	for b < k {
		switch r := k - b; {
		case r > 4 && b+6 <= stride:
			scoreCols6((*[6]float32)(dst[b:]), w[b:], stride, idx, val)
			b += 6
		case r > 2:
			// b is even and b+2 < k <= stride, with stride a multiple of
			// 8, so the 4 columns fit in the row.
			scoreCols4((*[4]float32)(dst[b:]), w[b:], stride, idx, val)
			b += 4
		case r == 2:
			scoreCols2((*[2]float32)(dst[b:]), w[b:], stride, idx, val)
			b += 2
		default:
			dst[b] = scoreCol(w[b:], stride, idx, val)
			b++
		}
	}
	clear(dst[k:]) // a block may have run into the padding
}

// The block kernels are kept out of line: inlined into scoresGeneric,
// their accumulators compete with its loop variables for registers.

// scoreCols6 sets d[c] = Σ_i val[i]·w[idx[i]·stride + c] for c < 6.
//
//go:noinline
func scoreCols6(d *[6]float32, w []float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)] // bounds check hint
	var s0, s1, s2, s3, s4, s5 float32
	for i, j := range idx {
		v := val[i]
		o := int(j) * stride
		r := (*[6]float32)(w[o : o+6])
		s0 += v * r[0]
		s1 += v * r[1]
		s2 += v * r[2]
		s3 += v * r[3]
		s4 += v * r[4]
		s5 += v * r[5]
	}
	d[0], d[1], d[2], d[3], d[4], d[5] = s0, s1, s2, s3, s4, s5
}

// scoreCols4 is scoreCols6 for 4 columns.
//
//go:noinline
func scoreCols4(d *[4]float32, w []float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	var s0, s1, s2, s3 float32
	for i, j := range idx {
		v := val[i]
		o := int(j) * stride
		r := (*[4]float32)(w[o : o+4])
		s0 += v * r[0]
		s1 += v * r[1]
		s2 += v * r[2]
		s3 += v * r[3]
	}
	d[0], d[1], d[2], d[3] = s0, s1, s2, s3
}

// scoreCols2 is scoreCols6 for 2 columns. Two accumulators per column, for
// even and odd nonzeros, halve the chain of dependent additions, which
// would otherwise bound this short loop.
//
//go:noinline
func scoreCols2(d *[2]float32, w []float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	var s0, s1, t0, t1 float32
	n := len(idx) &^ 1
	for i := 0; i < n; i += 2 {
		j0, j1 := int(idx[i]), int(idx[i+1])
		v0, v1 := val[i], val[i+1]
		r := (*[2]float32)(w[j0*stride : j0*stride+2])
		q := (*[2]float32)(w[j1*stride : j1*stride+2])
		s0 += v0 * r[0]
		s1 += v0 * r[1]
		t0 += v1 * q[0]
		t1 += v1 * q[1]
	}
	if n < len(idx) {
		j, v := int(idx[n]), val[n]
		r := (*[2]float32)(w[j*stride : j*stride+2])
		s0 += v * r[0]
		s1 += v * r[1]
	}
	d[0], d[1] = s0+t0, s1+t1
}

// scoreCol returns Σ_i val[i]·w[idx[i]·stride], with four partial sums
// (see scoreCols2).
func scoreCol(w []float32, stride int, idx []uint32, val []float32) float32 {
	val = val[:len(idx)]
	var s0, s1, s2, s3 float32
	n := len(idx) &^ 3
	// idx[i+1] .. idx[i+3] keep their bounds checks: removing them with
	// (*[4]uint32)(idx[i:]) made the loop 20% slower (the conversion
	// costs more instructions than the checks it saves).
	for i := 0; i < n; i += 4 {
		s0 += val[i] * w[int(idx[i])*stride]
		s1 += val[i+1] * w[int(idx[i+1])*stride]
		s2 += val[i+2] * w[int(idx[i+2])*stride]
		s3 += val[i+3] * w[int(idx[i+3])*stride]
	}
	for i := n; i < len(idx); i++ {
		s0 += val[i] * w[int(idx[i])*stride]
	}
	return (s0 + s1) + (s2 + s3)
}

// addToFaceGeneric performs w[j·stride + k] += a·x_j.
func addToFaceGeneric(w []float32, stride, k int, a float32, idx []uint32, val []float32) {
	val = val[:len(idx)]
	for i, j := range idx {
		w[int(j)*stride+k] += a * val[i]
	}
}

// addOuterGeneric performs w[j·stride : j·stride+k] += x_j·c[:k]. The
// padding columns are not touched.
//
// As in scoresGeneric, the k columns are cut into blocks of 6, 4, 2 and 1,
// each a pass over x with its coefficients in locals; here the blocks never
// run into the padding. For K=10 this is twice as fast as one pass over x
// with a loop over the k columns per nonzero.
func addOuterGeneric(w, c []float32, k int, idx []uint32, val []float32) {
	stride := len(c)
	b := 0
	for b < k {
		switch r := k - b; {
		case r >= 6:
			addOuterCols6(w[b:], (*[6]float32)(c[b:]), stride, idx, val)
			b += 6
		case r >= 4:
			addOuterCols4(w[b:], (*[4]float32)(c[b:]), stride, idx, val)
			b += 4
		case r >= 2:
			addOuterCols2(w[b:], (*[2]float32)(c[b:]), stride, idx, val)
			b += 2
		default:
			addOuterCol(w[b:], c[b], stride, idx, val)
			b++
		}
	}
}

// addOuterCols6 performs w[j·stride + c] += x_j·cs[c] for c < 6.
//
//go:noinline
func addOuterCols6(w []float32, cs *[6]float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	c0, c1, c2, c3, c4, c5 := cs[0], cs[1], cs[2], cs[3], cs[4], cs[5]
	for i, j := range idx {
		v := val[i]
		o := int(j) * stride
		r := (*[6]float32)(w[o : o+6])
		r[0] += v * c0
		r[1] += v * c1
		r[2] += v * c2
		r[3] += v * c3
		r[4] += v * c4
		r[5] += v * c5
	}
}

// addOuterCols4 is addOuterCols6 for 4 columns.
//
//go:noinline
func addOuterCols4(w []float32, cs *[4]float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	c0, c1, c2, c3 := cs[0], cs[1], cs[2], cs[3]
	for i, j := range idx {
		v := val[i]
		o := int(j) * stride
		r := (*[4]float32)(w[o : o+4])
		r[0] += v * c0
		r[1] += v * c1
		r[2] += v * c2
		r[3] += v * c3
	}
}

// addOuterCols2 is addOuterCols6 for 2 columns.
//
//go:noinline
func addOuterCols2(w []float32, cs *[2]float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	c0, c1 := cs[0], cs[1]
	for i, j := range idx {
		v := val[i]
		o := int(j) * stride
		r := (*[2]float32)(w[o : o+2])
		r[0] += v * c0
		r[1] += v * c1
	}
}

// addOuterCol performs w[j·stride] += x_j·c.
func addOuterCol(w []float32, c float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	for i, j := range idx {
		w[int(j)*stride] += val[i] * c
	}
}

// biasArgmaxGeneric sets dst[j] = s·(dst[j] + b·row0[j]) for every j, with
// the product b·row0[j] rounded to float32 before the addition (never
// fused), and returns the first j with the largest dst[j]: the j kept by
// the scan "best = j if dst[j] > dst[best]", so a NaN dst[0] gives 0 and
// any other NaN is passed over.
func biasArgmaxGeneric(dst, row0 []float32, s, b float32) int {
	row0 = row0[:len(dst)]
	best := 0
	for j := range dst {
		dst[j] = s * (dst[j] + float32(b*row0[j]))
		if dst[j] > dst[best] {
			best = j
		}
	}
	return best
}
