package sparsevec

import "testing"

// 4-column blocks over the first n4 columns (n4 multiple of 4), 2-nnz unroll.
func scores4u2(dst, w []float32, stride, n4 int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	n := len(idx) &^ 1
	b := 0
	for ; b+4 <= n4; b += 4 {
		var s0, s1, s2, s3 float32
		for i := 0; i < n; i += 2 {
			v, u := val[i], val[i+1]
			o := int(idx[i])*stride + b
			p := int(idx[i+1])*stride + b
			r := (*[4]float32)(w[o : o+4])
			q := (*[4]float32)(w[p : p+4])
			s0 += v*r[0] + u*q[0]
			s1 += v*r[1] + u*q[1]
			s2 += v*r[2] + u*q[2]
			s3 += v*r[3] + u*q[3]
		}
		if n < len(idx) {
			v := val[n]
			o := int(idx[n])*stride + b
			r := (*[4]float32)(w[o : o+4])
			s0 += v * r[0]
			s1 += v * r[1]
			s2 += v * r[2]
			s3 += v * r[3]
		}
		d := (*[4]float32)(dst[b : b+4])
		d[0], d[1], d[2], d[3] = s0, s1, s2, s3
	}
	clear(dst[b:])
}

func scores4u1(dst, w []float32, stride, n4 int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	b := 0
	for ; b+4 <= n4; b += 4 {
		var s0, s1, s2, s3 float32
		for i, j := range idx {
			v := val[i]
			o := int(j)*stride + b
			r := (*[4]float32)(w[o : o+4])
			s0 += v * r[0]
			s1 += v * r[1]
			s2 += v * r[2]
			s3 += v * r[3]
		}
		d := (*[4]float32)(dst[b : b+4])
		d[0], d[1], d[2], d[3] = s0, s1, s2, s3
	}
	clear(dst[b:])
}

// 6 accumulators
func scores6(dst, w []float32, stride, k int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	b := 0
	for ; b < k; b += 6 {
		var s0, s1, s2, s3, s4, s5 float32
		for i, j := range idx {
			v := val[i]
			o := int(j)*stride + b
			r := (*[6]float32)(w[o : o+6])
			s0 += v * r[0]
			s1 += v * r[1]
			s2 += v * r[2]
			s3 += v * r[3]
			s4 += v * r[4]
			s5 += v * r[5]
		}
		d := (*[6]float32)(dst[b : b+6])
		d[0], d[1], d[2], d[3], d[4], d[5] = s0, s1, s2, s3, s4, s5
	}
}

func BenchmarkZZ2(b *testing.B) {
	for _, k := range []int{1, 10, 100} {
		n4 := (k + 3) &^ 3
		b.Run("4u1/"+itoa(k), func(b *testing.B) {
			benchVariant(b, k, func(dst, w []float32, stride int, idx []uint32, val []float32) {
				scores4u1(dst, w, stride, n4, idx, val)
			})
		})
		b.Run("4u2/"+itoa(k), func(b *testing.B) {
			benchVariant(b, k, func(dst, w []float32, stride int, idx []uint32, val []float32) {
				scores4u2(dst, w, stride, n4, idx, val)
			})
		})
		if k == 10 {
			b.Run("6/"+itoa(k), func(b *testing.B) {
				benchVariant(b, k, func(dst, w []float32, stride int, idx []uint32, val []float32) {
					scores6(dst, w, stride, k, idx, val)
				})
			})
		}
	}
}
