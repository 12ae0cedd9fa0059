package sparsevec

// Pure-Go reference kernels. Preconditions (checked by the exported
// wrappers): len(val) == len(idx), every idx < len(w)/stride,
// len(dst) == len(c) == stride.

func scoresGeneric(dst, w []float32, stride int, idx []uint32, val []float32) {
	clear(dst)
	for i, j := range idx {
		v := val[i]
		row := w[int(j)*stride : int(j)*stride+stride]
		row = row[:len(dst)]
		for k := range dst {
			dst[k] += v * row[k]
		}
	}
}

func addToFaceGeneric(w []float32, stride, k int, a float32, idx []uint32, val []float32) {
	for i, j := range idx {
		w[int(j)*stride+k] += a * val[i]
	}
}

func addOuterGeneric(w []float32, stride int, c []float32, idx []uint32, val []float32) {
	for i, j := range idx {
		v := val[i]
		row := w[int(j)*stride : int(j)*stride+stride]
		row = row[:len(c)]
		for k := range c {
			row[k] += v * c[k]
		}
	}
}
