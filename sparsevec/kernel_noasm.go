package sparsevec

func scores(dst, w []float32, stride int, idx []uint32, val []float32) {
	scoresGeneric(dst, w, stride, idx, val)
}

func addToFace(w []float32, stride, k int, a float32, idx []uint32, val []float32) {
	addToFaceGeneric(w, stride, k, a, idx, val)
}

func addOuter(w []float32, stride int, c []float32, idx []uint32, val []float32) {
	addOuterGeneric(w, stride, c, idx, val)
}
