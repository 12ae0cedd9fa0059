package sparsevec

import "testing"

func scoresV1(dst, w []float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	for b := 0; b+8 <= len(dst); b += 8 {
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for i, j := range idx {
			v := val[i]
			o := int(j)*stride + b
			r := (*[8]float32)(w[o : o+8])
			s0 += v * r[0]
			s1 += v * r[1]
			s2 += v * r[2]
			s3 += v * r[3]
			s4 += v * r[4]
			s5 += v * r[5]
			s6 += v * r[6]
			s7 += v * r[7]
		}
		d := (*[8]float32)(dst[b : b+8])
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s0, s1, s2, s3, s4, s5, s6, s7
	}
}

func scoresV2(dst, w []float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	n := len(idx) &^ 1
	for b := 0; b+8 <= len(dst); b += 8 {
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for i := 0; i < n; i += 2 {
			v, u := val[i], val[i+1]
			o := int(idx[i])*stride + b
			p := int(idx[i+1])*stride + b
			r := (*[8]float32)(w[o : o+8])
			q := (*[8]float32)(w[p : p+8])
			s0 += v*r[0] + u*q[0]
			s1 += v*r[1] + u*q[1]
			s2 += v*r[2] + u*q[2]
			s3 += v*r[3] + u*q[3]
			s4 += v*r[4] + u*q[4]
			s5 += v*r[5] + u*q[5]
			s6 += v*r[6] + u*q[6]
			s7 += v*r[7] + u*q[7]
		}
		if n < len(idx) {
			v := val[n]
			o := int(idx[n])*stride + b
			r := (*[8]float32)(w[o : o+8])
			s0 += v * r[0]
			s1 += v * r[1]
			s2 += v * r[2]
			s3 += v * r[3]
			s4 += v * r[4]
			s5 += v * r[5]
			s6 += v * r[6]
			s7 += v * r[7]
		}
		d := (*[8]float32)(dst[b : b+8])
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s0, s1, s2, s3, s4, s5, s6, s7
	}
}

func scores16(dst, w []float32, stride int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	var t0, t1, t2, t3, t4, t5, t6, t7 float32
	for i, j := range idx {
		v := val[i]
		o := int(j) * 16
		r := (*[16]float32)(w[o : o+16])
		s0 += v * r[0]
		s1 += v * r[1]
		s2 += v * r[2]
		s3 += v * r[3]
		s4 += v * r[4]
		s5 += v * r[5]
		s6 += v * r[6]
		s7 += v * r[7]
		t0 += v * r[8]
		t1 += v * r[9]
		t2 += v * r[10]
		t3 += v * r[11]
		t4 += v * r[12]
		t5 += v * r[13]
		t6 += v * r[14]
		t7 += v * r[15]
	}
	d := (*[16]float32)(dst[:16])
	d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s0, s1, s2, s3, s4, s5, s6, s7
	d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15] = t0, t1, t2, t3, t4, t5, t6, t7
}

// K-aware: blocks of 8 live columns, then a tail of 4,2,1; padding cleared.
func scoresK(dst, w []float32, stride, k int, idx []uint32, val []float32) {
	val = val[:len(idx)]
	b := 0
	for ; b+8 <= k; b += 8 {
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for i, j := range idx {
			v := val[i]
			o := int(j)*stride + b
			r := (*[8]float32)(w[o : o+8])
			s0 += v * r[0]
			s1 += v * r[1]
			s2 += v * r[2]
			s3 += v * r[3]
			s4 += v * r[4]
			s5 += v * r[5]
			s6 += v * r[6]
			s7 += v * r[7]
		}
		d := (*[8]float32)(dst[b : b+8])
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s0, s1, s2, s3, s4, s5, s6, s7
	}
	if b+4 <= k {
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
		b += 4
	}
	if b+2 <= k {
		var s0, s1 float32
		for i, j := range idx {
			v := val[i]
			o := int(j)*stride + b
			r := (*[2]float32)(w[o : o+2])
			s0 += v * r[0]
			s1 += v * r[1]
		}
		d := (*[2]float32)(dst[b : b+2])
		d[0], d[1] = s0, s1
		b += 2
	}
	if b < k {
		var s0 float32
		for i, j := range idx {
			s0 += val[i] * w[int(j)*stride+b]
		}
		dst[b] = s0
		b++
	}
	clear(dst[b:])
}

func benchVariant(b *testing.B, k int, f func(dst, w []float32, stride int, idx []uint32, val []float32)) {
	bc := newBenchCase(k, 150)
	i := 0
	for b.Loop() {
		x := bc.xs[i%benchRows]
		f(bc.dst, bc.m.Data, bc.m.Stride, x.Idx, x.Val)
		i++
	}
}

func BenchmarkZZ(b *testing.B) {
	for _, k := range []int{1, 10, 100} {
		b.Run("gen/"+itoa(k), func(b *testing.B) { benchVariant(b, k, scoresGeneric) })
		b.Run("V1/"+itoa(k), func(b *testing.B) { benchVariant(b, k, scoresV1) })
		b.Run("V2/"+itoa(k), func(b *testing.B) { benchVariant(b, k, scoresV2) })
		b.Run("K/"+itoa(k), func(b *testing.B) {
			benchVariant(b, k, func(dst, w []float32, stride int, idx []uint32, val []float32) {
				scoresK(dst, w, stride, k, idx, val)
			})
		})
		if k == 10 {
			b.Run("S16/"+itoa(k), func(b *testing.B) { benchVariant(b, k, scores16) })
		}
	}
}

func itoa(k int) string { return string(rune('0'+k/100)) + string(rune('0'+k/10%10)) + string(rune('0'+k%10)) }
