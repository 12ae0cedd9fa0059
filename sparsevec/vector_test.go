package sparsevec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// toDense scatters x into a dense float64 vector of length d.
func toDense(x Vector, d int) []float64 {
	w := make([]float64, d)
	for i, j := range x.Idx {
		w[j] = float64(x.Val[i])
	}
	return w
}

func denseDot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestVectorBasics(t *testing.T) {
	var empty Vector
	if empty.Len() != 0 || empty.MaxIndex() != 0 || empty.SqNorm() != 0 || !empty.IsFinite() {
		t.Errorf("empty vector: Len %d MaxIndex %d SqNorm %v IsFinite %v",
			empty.Len(), empty.MaxIndex(), empty.SqNorm(), empty.IsFinite())
	}
	x := Vector{Idx: []uint32{1, 5, 9}, Val: []float32{3, -4, 0.5}}
	if x.Len() != 3 || x.MaxIndex() != 9 {
		t.Errorf("Len %d MaxIndex %d, want 3 9", x.Len(), x.MaxIndex())
	}
	if got := x.SqNorm(); got != 25.25 {
		t.Errorf("SqNorm = %v, want 25.25", got)
	}
	for _, tc := range []struct {
		v    float32
		want bool
	}{
		{0, true}, {-math.MaxFloat32, true}, {float32(math.Inf(1)), false},
		{float32(math.Inf(-1)), false}, {float32(math.NaN()), false},
	} {
		y := Vector{Idx: []uint32{0, 1}, Val: []float32{1, tc.v}}
		if got := y.IsFinite(); got != tc.want {
			t.Errorf("IsFinite with %v = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// TestDot checks the sparse–sparse merge against a dense dot product on
// random pairs with every overlap pattern: disjoint, identical, nested,
// interleaved and empty.
func TestDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	const d = 40
	vecs := []Vector{{}, {Idx: []uint32{}, Val: []float32{}}}
	for _, nnz := range []int{1, 2, 5, 17, 39, 40} {
		for range 3 {
			vecs = append(vecs, randVector(rng, d, nnz))
		}
	}
	// Identical index lists.
	x := randVector(rng, d, 10)
	y := cloneVector(x)
	for i := range y.Val {
		y.Val[i] = 2*rng.Float32() - 1
	}
	vecs = append(vecs, x, y)
	// Disjoint halves.
	vecs = append(vecs,
		Vector{Idx: []uint32{0, 2, 4, 6}, Val: []float32{1, 2, 3, 4}},
		Vector{Idx: []uint32{1, 3, 5, 7}, Val: []float32{1, 2, 3, 4}})
	for a, u := range vecs {
		for b, v := range vecs {
			got := Dot(u, v)
			want := denseDot(toDense(u, d), toDense(v, d))
			// Both sums add the same exact float64 products in the same
			// (index) order, skipping only zero products.
			if got != want {
				t.Errorf("Dot(vecs[%d], vecs[%d]) = %v, want %v", a, b, got, want)
			}
			if got2 := Dot(v, u); got2 != got {
				t.Errorf("Dot not symmetric for vecs[%d], vecs[%d]: %v vs %v", a, b, got, got2)
			}
		}
	}
	if got := Dot(x, x); got != x.SqNorm() {
		t.Errorf("Dot(x, x) = %v, SqNorm = %v", got, x.SqNorm())
	}
}

func TestDotDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const d = 50
	w := make([]float64, d)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for _, nnz := range []int{0, 1, 3, 8, 49, 50} {
		x := randVector(rng, d, nnz)
		if got, want := DotDense(x, w), denseDot(toDense(x, d), w); got != want {
			t.Errorf("nnz=%d: DotDense = %v, want %v", nnz, got, want)
		}
	}
	mustPanic(t, "DotDense index out of range", func() {
		DotDense(Vector{Idx: []uint32{d}, Val: []float32{1}}, w)
	})
	mustPanic(t, "DotDense short Val", func() {
		DotDense(Vector{Idx: []uint32{0, 1}, Val: []float32{1}}, w)
	})
}

func TestVectorAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	x, y := mnistVector(rng, 150), mnistVector(rng, 150)
	w := make([]float64, 785)
	var sink float64
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Dot", func() { sink += Dot(x, y) }},
		{"DotDense", func() { sink += DotDense(x, w) }},
		{"SqNorm", func() { sink += x.SqNorm() }},
	} {
		if n := testing.AllocsPerRun(100, tc.f); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", tc.name, n)
		}
	}
	_ = fmt.Sprint(sink)
}

func TestBelow(t *testing.T) {
	v := Vector{Idx: []uint32{1, 4, 9}, Val: []float32{1, 2, 3}}
	for _, tc := range []struct{ d, want int }{{0, 0}, {1, 0}, {2, 1}, {5, 2}, {9, 2}, {10, 3}} {
		if got := v.Below(tc.d); got.Len() != tc.want || len(got.Val) != tc.want {
			t.Errorf("Below(%d) kept %d indices and %d values, want %d", tc.d, got.Len(), len(got.Val), tc.want)
		}
	}
	short := Vector{Idx: []uint32{1, 2}, Val: []float32{1}}
	if got := short.Below(1); got.Len() != 2 {
		t.Error("a malformed vector must be returned unchanged for the kernels to refuse")
	}
}
