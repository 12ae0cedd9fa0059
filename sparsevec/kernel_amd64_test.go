//go:build amd64 && !purego

package sparsevec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func kernelImpls() []kernelImpl {
	impls := []kernelImpl{{"generic", func() func() {
		old := useAVX2
		useAVX2 = false
		return func() { useAVX2 = old }
	}}}
	if cpuHasAVX2FMA {
		impls = append(impls, kernelImpl{"avx2", func() func() {
			old := useAVX2
			useAVX2 = true
			return func() { useAVX2 = old }
		}})
	}
	return impls
}

// cpuHasAVX2FMA records the CPU's answer before any test changes useAVX2.
var cpuHasAVX2FMA = useAVX2

// randWeights returns n weights whose magnitudes span 2^-20 to 2^20, so
// that cancellation and rounding differ between summation orders.
func randWeights(rng *rand.Rand, n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = float32((2*rng.Float64() - 1) * math.Ldexp(1, rng.IntN(41)-20))
	}
	return w
}

// randPaddedWeights returns random weights for a d×k matrix laid out with
// StrideFor(k), with the padding columns zero as Matrix requires.
func randPaddedWeights(rng *rand.Rand, d, k int) []float32 {
	s := StrideFor(k)
	w := randWeights(rng, d*s)
	for j := 0; j < d; j++ {
		clear(w[j*s+k : (j+1)*s])
	}
	return w
}

// scoresAVX2ok is scoresAVX2 without the epilogue (k = 0), reporting only ok.
func scoresAVX2ok(dst, w []float32, idx []uint32, val []float32) bool {
	_, ok := scoresAVX2(dst, w, idx, val, 0, 0, 0)
	return ok
}

// TestScoresAVX2 compares the asm kernel with the generic one and both with
// the float64 reference. The asm sums four interleaved partial sums with
// FMA, the generic kernel one running sum of rounded products, so they may
// differ; each is within γ_n·Σ|x_i w_ik| of the exact score (see gamma), so
// they are within twice that of each other.
func TestScoresAVX2(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("CPU lacks AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(12, 12))
	const d = 500
	for _, k := range kernelShapes {
		s := StrideFor(k)
		w := randPaddedWeights(rng, d, k)
		for _, nnz := range append(nnzCounts, 150, 400, d) {
			name := fmt.Sprintf("K=%d,nnz=%d", k, nnz)
			x := randVector(rng, d, nnz)
			for i := range x.Val {
				x.Val[i] *= float32(math.Ldexp(1, rng.IntN(21)-10))
			}
			g := make([]float32, s)
			scoresGeneric(g, w, k, x.Idx, x.Val)
			a, awhole := guarded(s)
			if !scoresAVX2ok(a, w, x.Idx, x.Val) {
				t.Fatalf("%s: scoresAVX2 reported a bad index", name)
			}
			checkGuards(t, name, awhole)
			tol := gamma(nnz)
			for kk := 0; kk < s; kk++ {
				var exact, mag float64
				for i, j := range x.Idx {
					p := float64(x.Val[i]) * float64(w[int(j)*s+kk])
					exact += p
					mag += math.Abs(p)
				}
				ad, gd := float64(a[kk]), float64(g[kk])
				if kk >= k {
					if a[kk] != 0 {
						t.Errorf("%s: asm padding %d = %v, want 0", name, kk, a[kk])
					}
					continue
				}
				if !(math.Abs(ad-exact) <= tol*mag) {
					t.Errorf("%s: asm dst[%d] = %v, exact %v, error %.3g > bound %.3g", name, kk, ad, exact, math.Abs(ad-exact), tol*mag)
				}
				if !(math.Abs(gd-exact) <= tol*mag) {
					t.Errorf("%s: generic dst[%d] = %v, exact %v, error %.3g > bound %.3g", name, kk, gd, exact, math.Abs(gd-exact), tol*mag)
				}
				if !(math.Abs(ad-gd) <= 2*tol*mag) {
					t.Errorf("%s: asm %v and generic %v differ by more than %.3g", name, ad, gd, 2*tol*mag)
				}
			}
		}
	}
}

// TestAddOuterAVX2 compares the asm rank-one update with the generic one.
// The asm computes each w + v·c with one FMA, a single rounding of the
// exact value (Go's w + v*c may round twice), so it must be within u of
// the exact w + v·c (relative), and the generic result within
// (2u+u²)(|w| + |v·c|).
func TestAddOuterAVX2(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("CPU lacks AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(13, 13))
	const d = 300
	for _, k := range kernelShapes {
		s := StrideFor(k)
		w0 := randPaddedWeights(rng, d, k)
		c := randWeights(rng, s)
		clear(c[k:])
		for _, nnz := range append(nnzCounts, 150, d) {
			name := fmt.Sprintf("K=%d,nnz=%d", k, nnz)
			x := randVector(rng, d, nnz)
			g := append([]float32(nil), w0...)
			addOuterGeneric(g, c, k, x.Idx, x.Val)
			a, awhole := guarded(len(w0))
			copy(a, w0)
			if !addOuterAVX2(a, c, x.Idx, x.Val) {
				t.Fatalf("%s: addOuterAVX2 reported a bad index", name)
			}
			checkGuards(t, name, awhole)
			xv := make(map[int]float64)
			for i, j := range x.Idx {
				xv[int(j)] = float64(x.Val[i])
			}
			for p := range w0 {
				j, kk := p/s, p%s
				v, ok := xv[j]
				if !ok || kk >= k {
					if math.Float32bits(a[p]) != math.Float32bits(w0[p]) {
						t.Errorf("%s: asm changed W[%d][%d] from %v to %v", name, j, kk, w0[p], a[p])
					}
					continue
				}
				wd, vc := float64(w0[p]), v*float64(c[kk])
				exact := wd + vc
				if e := math.Abs(float64(a[p]) - exact); !(e <= u*math.Abs(exact)+0x1p-149) {
					t.Errorf("%s: asm W[%d][%d] = %v, exact %v, error %.3g", name, j, kk, a[p], exact, e)
				}
				if e := math.Abs(float64(g[p]) - exact); !(e <= updateTol(wd, vc)) {
					t.Errorf("%s: generic W[%d][%d] = %v, exact %v, error %.3g", name, j, kk, g[p], exact, e)
				}
			}
		}
	}
}

// TestAVX2BadIndex checks the asm kernels' own bounds checks, which the
// exported methods rely on for unsorted rows: an index whose row does not
// lie inside w, at every position of the 4-way unrolled loop and of the
// remainder loop, makes them report false without touching memory
// outside w.
func TestAVX2BadIndex(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("CPU lacks AVX2+FMA")
	}
	for _, k := range []int{1, 10, 17, 32, 40, 100} {
		s := StrideFor(k)
		const d = 8
		w, wwhole := guarded(d * s)
		for i := range w {
			w[i] = 1
		}
		c := make([]float32, s)
		c[0] = 1
		dst, dwhole := guarded(s)
		for _, n := range []int{1, 3, 4, 5, 7, 8, 9} {
			for bad := 0; bad < n; bad++ {
				for _, j := range []uint32{d, d + 1, 1 << 31, math.MaxUint32} {
					name := fmt.Sprintf("K=%d,n=%d,bad=%d,j=%d", k, n, bad, j)
					idx := make([]uint32, n)
					val := make([]float32, n)
					for i := range idx {
						idx[i] = uint32(i % d)
						val[i] = 1
					}
					idx[bad] = j
					if scoresAVX2ok(dst, w, idx, val) {
						t.Errorf("%s: scoresAVX2 accepted the index", name)
					}
					if addOuterAVX2(w, c, idx, val) {
						t.Errorf("%s: addOuterAVX2 accepted the index", name)
					}
					checkGuards(t, name+" w", wwhole)
					checkGuards(t, name+" dst", dwhole)
				}
			}
		}
		// w shorter than one row: only an empty x is accepted.
		short := w[:s-Lanes]
		if !scoresAVX2ok(dst, short, nil, nil) || !addOuterAVX2(short, c, nil, nil) {
			t.Errorf("K=%d: empty x rejected with a short w", k)
		}
		for i, v := range dst {
			if v != 0 {
				t.Errorf("K=%d: empty x gave dst[%d] = %v", k, i, v)
			}
		}
		if _, ok := scoresAVX2(dst, short, nil, nil, k, 1, 1); ok {
			t.Errorf("K=%d: epilogue accepted w without a bias row", k)
		}
		one := []uint32{0}
		if scoresAVX2ok(dst, short, one, []float32{1}) || addOuterAVX2(short, c, one, []float32{1}) {
			t.Errorf("K=%d: row 0 accepted with w shorter than a row", k)
		}
		checkGuards(t, fmt.Sprintf("K=%d short w", k), wwhole)
	}
}
