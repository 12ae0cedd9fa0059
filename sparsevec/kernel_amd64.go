//go:build amd64 && !purego

package sparsevec

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2+FMA kernels of kernel_amd64.s for Scores and
// AddOuter. It is set once, at package initialisation, from the CPU
// features (x/sys/cpu also checks that the OS saves the YMM registers);
// only tests change it.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// maxAVX2Stride bounds the strides given to the asm kernels, so that the
// row offset idx·stride·4 they compute and check cannot overflow 64 bits.
// A K that large (a 1 GiB row) never happens in practice.
const maxAVX2Stride = 1 << 28

// scoresAVX2 sets dst[:] = Σ_i val[i]·w[idx[i]·len(dst) : (idx[i]+1)·len(dst)]
// with FMA, for all len(dst) columns, padding included. It requires
// len(dst) to be a positive multiple of 8 below maxAVX2Stride and
// len(val) >= len(idx). It reports false, leaving dst unspecified, if a
// row idx[i] does not lie wholly inside w.
//
// With k > 0 (at most len(dst)) it then applies biasArgmaxGeneric's
// epilogue with row0 = w[:len(dst)] to the first k columns, sets the
// padding columns k.. to 0, and returns the argmax as best; it reports
// false if w holds no whole row. With k = 0, best is 0 and s and b are
// not used.
//
//go:noescape
func scoresAVX2(dst, w []float32, idx []uint32, val []float32, k int, s, b float32) (best int, ok bool)

// addOuterAVX2 performs w[j·s : (j+1)·s] += val[i]·c for every j = idx[i],
// where s = len(c), with one FMA (one rounding) per weight. It requires
// len(c) to be a positive multiple of 8 below maxAVX2Stride and
// len(val) >= len(idx). It reports false if a row idx[i] does not lie
// wholly inside w; the rows of the nonzeros before it have then been
// updated.
//
//go:noescape
func addOuterAVX2(w, c []float32, idx []uint32, val []float32) (ok bool)

func scoresArgmax(dst, w []float32, k int, idx []uint32, val []float32, s, b float32) int {
	if !useAVX2 || len(dst) >= maxAVX2Stride {
		scoresGeneric(dst, w, k, idx, val)
		return biasArgmaxGeneric(dst[:k], w[:k], s, b)
	}
	best, ok := scoresAVX2(dst, w, idx, val, k, s, b)
	if !ok {
		panicIndex(idx, len(w)/len(dst))
	}
	return best
}

func scores(dst, w []float32, k int, idx []uint32, val []float32) {
	if !useAVX2 || len(dst) >= maxAVX2Stride {
		scoresGeneric(dst, w, k, idx, val)
		return
	}
	if _, ok := scoresAVX2(dst, w, idx, val, 0, 0, 0); !ok {
		panicIndex(idx, len(w)/len(dst))
	}
	// Padding comes out 0 even if an infinite x_j met a zero padding
	// weight. At most 7 entries: a loop is cheaper than clear's memclr call.
	for i := k; i < len(dst); i++ {
		dst[i] = 0
	}
}

func addOuter(w, c []float32, k int, idx []uint32, val []float32) {
	// The asm updates whole 8-float chunks, padding included, so it is
	// used only when the padding of c is 0 as documented; the generic
	// kernel never touches the padding.
	if !useAVX2 || len(c) >= maxAVX2Stride || !allZero(c[k:]) {
		addOuterGeneric(w, c, k, idx, val)
		return
	}
	if !addOuterAVX2(w, c, idx, val) {
		panicIndex(idx, len(w)/len(c))
	}
}

func allZero(c []float32) bool {
	for _, v := range c {
		if v != 0 {
			return false
		}
	}
	return true
}

// scoresC8W16AVX2 is scoresAVX2 over the row val[i] = dict[codes[i]] with
// 2-byte indices; it requires len(codes) >= len(idx). Its FMAs and
// epilogue are scoresAVX2's, so it returns the same bits as scoresAVX2 on
// the decoded row.
//
//go:noescape
func scoresC8W16AVX2(dst, w []float32, idx []uint16, codes []uint8, k int, s, b float32, dict *[256]float32) (best int, ok bool)

// addOuterC8W16AVX2 is addOuterAVX2 over the row val[i] = dict[codes[i]]
// with 2-byte indices; it requires len(codes) >= len(idx).
//
//go:noescape
func addOuterC8W16AVX2(w, c []float32, idx []uint16, codes []uint8, dict *[256]float32) (ok bool)

// codedDirect reports whether the coded kernels run without decoding.
func codedDirect() bool { return useAVX2 }

func scoresArgmaxCoded(dst, w []float32, k int, x *CodedRow, s, b float32) int {
	if !useAVX2 || len(dst) >= maxAVX2Stride {
		return scoresArgmaxDecoded(dst, w, k, x, s, b)
	}
	best, ok := scoresC8W16AVX2(dst, w, x.Idx, x.Codes[:len(x.Idx)], k, s, b, x.Dict)
	if !ok {
		panicIndex(x.Idx, len(w)/len(dst))
	}
	return best
}

func addOuterCoded(w, c []float32, k int, x *CodedRow) {
	if !useAVX2 || len(c) >= maxAVX2Stride || !allZero(c[k:]) {
		addOuterDecoded(w, c, k, x)
		return
	}
	if !addOuterC8W16AVX2(w, c, x.Idx, x.Codes[:len(x.Idx)], x.Dict) {
		panicIndex(x.Idx, len(w)/len(c))
	}
}
