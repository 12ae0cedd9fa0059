//go:build !amd64 || purego

package sparsevec

func scores(dst, w []float32, k int, idx []uint32, val []float32) {
	scoresGeneric(dst, w, k, idx, val)
}

func addOuter(w, c []float32, k int, idx []uint32, val []float32) {
	addOuterGeneric(w, c, k, idx, val)
}

func scoresArgmax(dst, w []float32, k int, idx []uint32, val []float32, s, b float32) int {
	scoresGeneric(dst, w, k, idx, val)
	return biasArgmaxGeneric(dst[:k], w[:k], s, b)
}

func codedDirect() bool { return false }

func scoresArgmaxCoded(dst, w []float32, k int, x *CodedRow, s, b float32) int {
	return scoresArgmaxDecoded(dst, w, k, x, s, b)
}

func addOuterCoded(w, c []float32, k int, x *CodedRow) { addOuterDecoded(w, c, k, x) }
