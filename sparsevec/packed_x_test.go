package sparsevec

import "testing"

func BenchmarkXWiden(b *testing.B) {
	src := make([]uint16, 150)
	dst := make([]uint32, 150)
	for b.Loop() {
		widen(dst, src)
	}
}

func BenchmarkXDecode(b *testing.B) {
	src := make([]uint8, 150)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	dst := make([]float32, 150)
	var d [256]float32
	for b.Loop() {
		decode(dst, src, &d)
	}
}
