package sparsevec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// FuzzKernels is a differential check of the sparse kernels against the
// dense float64 reference, for every implementation on this machine. The
// input chooses K (byte 0), D (byte 1) and the nonzeros (then pairs of
// bytes: index mod D, value/16 as an int8); the weights come from a PCG
// seeded with the input's length and first bytes.
func FuzzKernels(f *testing.F) {
	f.Add([]byte{9, 20, 1, 16, 3, 255, 7, 128, 19, 1})
	f.Add([]byte{0, 0})
	f.Add([]byte{99, 63, 0, 1, 62, 2, 31, 3, 32, 4, 33, 5})
	f.Add([]byte{39, 5, 0, 0, 1, 0, 2, 0, 3, 0, 4, 127})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		k, d := 1+int(data[0])%100, 1+int(data[1])%64
		seen := make(map[uint32]bool)
		var x Vector
		for p := 2; p+1 < len(data); p += 2 {
			j := uint32(int(data[p]) % d)
			if !seen[j] {
				seen[j] = true
				x.Idx = append(x.Idx, j)
				x.Val = append(x.Val, float32(int8(data[p+1]))/16)
			}
		}
		// Sort the pairs by index: Vector requires ascending indices.
		perm := make([]int, len(x.Idx))
		for i := range perm {
			perm[i] = i
		}
		slices.SortFunc(perm, func(a, b int) int { return int(x.Idx[a]) - int(x.Idx[b]) })
		sorted := Vector{Idx: make([]uint32, len(perm)), Val: make([]float32, len(perm))}
		for i, p := range perm {
			sorted.Idx[i], sorted.Val[i] = x.Idx[p], x.Val[p]
		}
		x = sorted

		rng := rand.New(rand.NewPCG(uint64(len(data)), uint64(k)<<8|uint64(d)))
		for _, impl := range kernelImpls() {
			restore := impl.use()
			m := NewMatrix(d, k)
			ref := newDense(k, d)
			randFill(rng, m, ref)
			dst := make([]float32, m.Stride)
			m.Scores(dst, x)
			want, mag := ref.scores(x)
			for kk := range dst {
				if kk >= k {
					if dst[kk] != 0 {
						t.Fatalf("%s: padding dst[%d] = %v", impl.name, kk, dst[kk])
					}
					continue
				}
				if e := math.Abs(float64(dst[kk]) - want[kk]); !(e <= gamma(len(x.Idx))*mag[kk]) {
					t.Fatalf("%s: K=%d D=%d nnz=%d: dst[%d] = %v, want %v", impl.name, k, d, len(x.Idx), kk, dst[kk], want[kk])
				}
			}

			c := make([]float32, m.Stride)
			for kk := 0; kk < k; kk++ {
				c[kk] = float32(rng.IntN(64)-32) / 8
			}
			fuzzCoded(t, impl.name, m, c, x)
			before := slices.Clone(m.Data)
			m.AddOuter(c, &x)
			face := rng.IntN(k)
			m.AddToFace(face, 0.5, x)
			xv := make(map[int]float64)
			for i, j := range x.Idx {
				xv[int(j)] = float64(x.Val[i])
			}
			for p, got := range m.Data {
				j, kk := p/m.Stride, p%m.Stride
				v, ok := xv[j]
				if kk >= k {
					if got != 0 {
						t.Fatalf("%s: padding W[%d][%d] = %v", impl.name, j, kk, got)
					}
					continue
				}
				w := float64(before[p])
				if !ok {
					if got != before[p] {
						t.Fatalf("%s: untouched W[%d][%d] changed", impl.name, j, kk)
					}
					continue
				}
				// Two updates: the bound of the first, then of the second
				// applied to the rounded first result.
				ab := v * float64(c[kk])
				mid := w + ab
				tol := updateTol(w, ab)
				if kk == face {
					tol += updateTol(mid, 0.5*v) + (2*u+u*u)*tol
					mid += 0.5 * v
				}
				if e := math.Abs(float64(got) - mid); !(e <= tol) {
					t.Fatalf("%s: W[%d][%d] = %v, want %v ± %.3g", impl.name, j, kk, got, mid, tol)
				}
			}
			restore()
		}
	})
}

// fuzzCoded checks the Coded methods bit for bit against the Vector
// methods on x coded (its values, int8/16, take at most 256 codes), on
// copies of m.
func fuzzCoded(t *testing.T, impl string, m *Matrix, c []float32, x Vector) {
	t.Helper()
	var d dictionary
	if !d.addAll(x.Val) {
		t.Fatal("more than 256 distinct values")
	}
	cx := CodedRow{Idx: make([]uint16, len(x.Idx)), Codes: make([]uint8, len(x.Idx)), Dict: d.values()}
	narrow(cx.Idx, x.Idx)
	d.encode(cx.Codes, x.Val)
	a := &Matrix{D: m.D, K: m.K, Stride: m.Stride, Data: slices.Clone(m.Data)}
	b := &Matrix{D: m.D, K: m.K, Stride: m.Stride, Data: slices.Clone(m.Data)}
	da, db := make([]float32, m.Stride), make([]float32, m.Stride)
	ba, bb := a.ScoresArgmaxCoded(da, &cx, 0.5, 1), b.ScoresArgmax(db, &x, 0.5, 1)
	if ba != bb || !sameBits(da, db) {
		t.Fatalf("%s: ScoresArgmaxCoded %d %v, ScoresArgmax %d %v", impl, ba, da, bb, db)
	}
	a.AddOuterCoded(c, &cx)
	b.AddOuter(c, &x)
	a.AddToFaceCoded(0, -0.25, &cx)
	b.AddToFace(0, -0.25, x)
	if !sameBits(a.Data, b.Data) {
		t.Fatalf("%s: AddOuterCoded/AddToFaceCoded differ from AddOuter/AddToFace", impl)
	}
}
