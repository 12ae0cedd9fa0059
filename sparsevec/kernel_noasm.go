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
