package sparsevec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestStrideFor(t *testing.T) {
	for _, tc := range []struct{ k, want int }{
		{1, 8}, {3, 8}, {8, 8}, {9, 16}, {10, 16}, {16, 16}, {17, 24}, {40, 40}, {100, 104},
	} {
		if got := StrideFor(tc.k); got != tc.want {
			t.Errorf("StrideFor(%d) = %d, want %d", tc.k, got, tc.want)
		}
	}
}

func TestNewMatrix(t *testing.T) {
	m := NewMatrix(5, 10)
	if m.D != 5 || m.K != 10 || m.Stride != 16 || len(m.Data) != 80 {
		t.Fatalf("NewMatrix(5, 10) = {D:%d K:%d Stride:%d len(Data):%d}", m.D, m.K, m.Stride, len(m.Data))
	}
	if m := NewMatrix(0, 1); m.D != 0 || len(m.Data) != 0 {
		t.Errorf("NewMatrix(0, 1): D=%d len(Data)=%d", m.D, len(m.Data))
	}
	mustPanic(t, "NewMatrix(-1, 1)", func() { NewMatrix(-1, 1) })
	mustPanic(t, "NewMatrix(1, 0)", func() { NewMatrix(1, 0) })
}

func TestAtSetRow(t *testing.T) {
	m := NewMatrix(3, 10)
	m.Set(2, 9, 1.5)
	m.Set(0, 0, -2)
	if got := m.At(2, 9); got != 1.5 {
		t.Errorf("At(2, 9) = %v, want 1.5", got)
	}
	if got := m.Data[2*16+9]; got != 1.5 {
		t.Errorf("Data[2*Stride+9] = %v, want 1.5 (feature-major layout)", got)
	}
	r := m.Row(2)
	if len(r) != 16 || cap(r) != 16 || r[9] != 1.5 {
		t.Errorf("Row(2): len %d cap %d r[9] %v", len(r), cap(r), r[9])
	}
	mustPanic(t, "At(0, K)", func() { m.At(0, 10) })
	mustPanic(t, "Set(0, -1)", func() { m.Set(0, -1, 1) })
	mustPanic(t, "At(D, 0)", func() { m.At(3, 0) })
}

func TestGrow(t *testing.T) {
	m := NewMatrix(2, 3)
	m.Set(1, 2, 7)
	m.Grow(1) // no-op
	if m.D != 2 || len(m.Data) != 16 {
		t.Fatalf("Grow(1) changed shape: D=%d len=%d", m.D, len(m.Data))
	}
	m.Grow(5)
	if m.D != 5 || len(m.Data) != 5*8 {
		t.Fatalf("Grow(5): D=%d len=%d", m.D, len(m.Data))
	}
	if m.At(1, 2) != 7 {
		t.Errorf("Grow lost a weight: At(1, 2) = %v", m.At(1, 2))
	}
	for i, v := range m.Data[2*8:] {
		if v != 0 {
			t.Fatalf("new row entry %d = %v, want 0", i, v)
		}
	}

	// Growth is geometric: many one-row steps reallocate O(log D) times.
	reallocs := 0
	for d := m.D + 1; d <= 1000; d++ {
		c := cap(m.Data)
		m.Grow(d)
		if cap(m.Data) != c {
			reallocs++
		}
	}
	if reallocs > 12 {
		t.Errorf("Grow to 1000 rows one at a time reallocated %d times", reallocs)
	}

	// Growing into existing capacity clears whatever is there.
	backing := make([]float32, 4*8)
	for i := range backing {
		backing[i] = 9
	}
	m = &Matrix{D: 1, K: 3, Stride: 8, Data: backing[:8]}
	m.Grow(4)
	if &m.Data[0] != &backing[0] {
		t.Errorf("Grow reallocated although capacity sufficed")
	}
	for i, v := range m.Data[8:] {
		if v != 0 {
			t.Fatalf("reused capacity entry %d = %v, want 0", i, v)
		}
	}
	if m.Data[0] != 9 {
		t.Errorf("Grow changed an existing weight")
	}
}

func TestScaleZero(t *testing.T) {
	m := NewMatrix(2, 3)
	m.Set(0, 1, 2)
	m.Set(1, 2, -4)
	m.Scale(0.5)
	if m.At(0, 1) != 1 || m.At(1, 2) != -2 {
		t.Errorf("Scale(0.5): %v", m.Data)
	}
	m.Zero()
	for _, v := range m.Data {
		if v != 0 {
			t.Fatalf("Zero left %v", m.Data)
		}
	}
}

// kernelShapes are the face counts the kernels are tested with: below,
// at and above each multiple of Lanes, MNIST's 10 and the largest K we
// support.
var kernelShapes = []int{1, 3, 7, 8, 9, 10, 15, 16, 17, 24, 31, 32, 33, 40, 64, 100}

// nnzCounts are the row lengths tested; the kernels unroll over nonzeros,
// so every remainder mod 4 and 8 appears, plus an empty and a full row.
var nnzCounts = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 31, 60}

const testD = 60 // feature rows in the test matrices; nnz 60 is a full row

// guardedMatrix returns a zero d×k matrix whose Data is guarded on both
// sides; see guarded.
func guardedMatrix(d, k int) (m *Matrix, whole []float32) {
	s := StrideFor(k)
	data, whole := guarded(d * s)
	return &Matrix{D: d, K: k, Stride: s, Data: data}, whole
}

func TestScores(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 1))
		for _, k := range kernelShapes {
			m, mwhole := guardedMatrix(testD, k)
			ref := newDense(k, testD)
			randFill(rng, m, ref)
			for _, nnz := range nnzCounts {
				name := fmt.Sprintf("K=%d,nnz=%d", k, nnz)
				x := randVector(rng, testD, nnz)
				x0 := cloneVector(x)
				dst, dwhole := guarded(m.Stride)
				for i := range dst {
					dst[i] = 42 // Scores must overwrite, not accumulate
				}
				m.Scores(dst, x)
				checkGuards(t, name+" dst", dwhole)
				checkGuards(t, name+" W", mwhole)
				if !sameVector(x, x0) {
					t.Errorf("%s: Scores modified x", name)
				}
				want, mag := ref.scores(x)
				tol := gamma(nnz)
				for kk := 0; kk < m.Stride; kk++ {
					got := float64(dst[kk])
					if kk >= k {
						if got != 0 {
							t.Errorf("%s: padding dst[%d] = %v, want 0", name, kk, got)
						}
						continue
					}
					if !(math.Abs(got-want[kk]) <= tol*mag[kk]) { // NaN fails
						t.Errorf("%s: dst[%d] = %v, want %v ± %.3g", name, kk, got, want[kk], tol*mag[kk])
					}
				}
			}
		}
	})
}

// TestScoresExact uses small integer weights and values, so every partial
// sum is an exact float32 and every implementation, whatever its summation
// order or use of FMA, must return the exact scores bit for bit.
func TestScoresExact(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(2, 2))
		for _, k := range kernelShapes {
			m := NewMatrix(testD, k)
			ref := newDense(k, testD)
			for j := 0; j < m.D; j++ {
				for kk := 0; kk < k; kk++ {
					v := float32(rng.IntN(33) - 16)
					m.Set(j, kk, v)
					ref[kk][j] = float64(v)
				}
			}
			for _, nnz := range nnzCounts {
				x := randVector(rng, testD, nnz)
				for i := range x.Val {
					x.Val[i] = float32(rng.IntN(17) - 8)
				}
				dst := make([]float32, m.Stride)
				m.Scores(dst, x)
				want, _ := ref.scores(x)
				for kk := 0; kk < k; kk++ {
					if float64(dst[kk]) != want[kk] {
						t.Errorf("K=%d,nnz=%d: dst[%d] = %v, want exactly %v", k, nnz, kk, dst[kk], want[kk])
					}
				}
			}
		}
	})
}

// updateTol is the error bound of one update w + a·b in float32, whether
// the product is rounded first (two roundings) or fused (one):
// |fl(w + a·b) - (w + a·b)| <= (2u + u²)(|w| + |a·b|).
func updateTol(w, ab float64) float64 { return (2*u + u*u) * (math.Abs(w) + math.Abs(ab)) }

func TestAddToFace(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 3))
		for _, k := range kernelShapes {
			m, mwhole := guardedMatrix(testD, k)
			ref := newDense(k, testD)
			randFill(rng, m, ref)
			for _, nnz := range nnzCounts {
				name := fmt.Sprintf("K=%d,nnz=%d", k, nnz)
				x := randVector(rng, testD, nnz)
				x0 := cloneVector(x)
				face := rng.IntN(k)
				a := 2*rng.Float32() - 1
				before := append([]float32(nil), m.Data...)
				m.AddToFace(face, a, x)
				checkGuards(t, name, mwhole)
				if !sameVector(x, x0) {
					t.Errorf("%s: AddToFace modified x", name)
				}
				touched := make(map[int]float64)
				for i, j := range x.Idx {
					touched[int(j)*m.Stride+face] = float64(a) * float64(x.Val[i])
				}
				for p, got := range m.Data {
					w := float64(before[p])
					ab, ok := touched[p]
					if !ok {
						if math.Float32bits(got) != math.Float32bits(before[p]) {
							t.Errorf("%s: untouched W[%d][%d] changed from %v to %v", name, p/m.Stride, p%m.Stride, before[p], got)
						}
						continue
					}
					if want := w + ab; !(math.Abs(float64(got)-want) <= updateTol(w, ab)) {
						t.Errorf("%s: W[%d][%d] = %v, want %v", name, p/m.Stride, face, got, want)
					}
				}
			}
		}
	})
}

func TestAddOuter(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 4))
		for _, k := range kernelShapes {
			m, mwhole := guardedMatrix(testD, k)
			ref := newDense(k, testD)
			randFill(rng, m, ref)
			for _, nnz := range nnzCounts {
				name := fmt.Sprintf("K=%d,nnz=%d", k, nnz)
				x := randVector(rng, testD, nnz)
				x0 := cloneVector(x)
				c, cwhole := guarded(m.Stride)
				for kk := 0; kk < k; kk++ {
					if rng.IntN(3) > 0 { // leave about a third of the faces at 0
						c[kk] = 2*rng.Float32() - 1
					}
				}
				c0 := append([]float32(nil), c...)
				before := append([]float32(nil), m.Data...)
				m.AddOuter(c, &x)
				checkGuards(t, name+" W", mwhole)
				checkGuards(t, name+" c", cwhole)
				if !sameVector(x, x0) {
					t.Errorf("%s: AddOuter modified x", name)
				}
				for i := range c {
					if c[i] != c0[i] {
						t.Fatalf("%s: AddOuter modified c", name)
					}
				}
				xv := make(map[int]float32)
				for i, j := range x.Idx {
					xv[int(j)] = x.Val[i]
				}
				for p, got := range m.Data {
					j, kk := p/m.Stride, p%m.Stride
					v, ok := xv[j]
					if !ok || c[kk] == 0 {
						// Rows outside x, faces with c == 0 and the
						// padding are unchanged, bit for bit.
						if math.Float32bits(got) != math.Float32bits(before[p]) {
							t.Errorf("%s: W[%d][%d] changed from %v to %v", name, j, kk, before[p], got)
						}
						continue
					}
					w, ab := float64(before[p]), float64(v)*float64(c[kk])
					if want := w + ab; !(math.Abs(float64(got)-want) <= updateTol(w, ab)) {
						t.Errorf("%s: W[%d][%d] = %v, want %v", name, j, kk, got, want)
					}
				}
			}
		}
	})
}

// TestKernelPanics checks that programmer errors panic instead of reading
// or writing outside the matrix, including an out-of-range index hidden
// in the middle of an unsorted row (checkVec only looks at the last index).
func TestKernelPanics(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		for _, k := range []int{1, 10, 17, 100} {
			m, mwhole := guardedMatrix(4, k)
			s := m.Stride
			ok := Vector{Idx: []uint32{0, 3}, Val: []float32{1, 1}}
			big := Vector{Idx: []uint32{1, 4}, Val: []float32{1, 1}}
			unsorted := Vector{Idx: []uint32{2, 4, 1}, Val: []float32{1, 1, 1}}
			unsortedFirst := Vector{Idx: []uint32{5, 1}, Val: []float32{1, 1}}
			short := Vector{Idx: []uint32{0, 1}, Val: []float32{1}}
			dst := make([]float32, s)
			c := make([]float32, s)
			c[0] = 1
			for _, tc := range []struct {
				name string
				f    func()
			}{
				{"Scores short dst", func() { m.Scores(dst[:s-1], ok) }},
				{"Scores index >= D", func() { m.Scores(dst, big) }},
				{"Scores unsorted index >= D", func() { m.Scores(dst, unsorted) }},
				{"Scores unsorted first index >= D", func() { m.Scores(dst, unsortedFirst) }},
				{"Scores short Val", func() { m.Scores(dst, short) }},
				{"AddToFace k = K", func() { m.AddToFace(k, 1, ok) }},
				{"AddToFace k < 0", func() { m.AddToFace(-1, 1, ok) }},
				{"AddToFace index >= D", func() { m.AddToFace(0, 1, big) }},
				{"AddToFace unsorted index >= D", func() { m.AddToFace(0, 1, unsorted) }},
				{"AddToFace short Val", func() { m.AddToFace(0, 1, short) }},
				{"AddOuter short c", func() { m.AddOuter(c[:s-1], &ok) }},
				{"AddOuter index >= D", func() { m.AddOuter(c, &big) }},
				{"AddOuter unsorted index >= D", func() { m.AddOuter(c, &unsorted) }},
				{"AddOuter unsorted first index >= D", func() { m.AddOuter(c, &unsortedFirst) }},
				{"AddOuter short Val", func() { m.AddOuter(c, &short) }},
			} {
				mustPanic(t, fmt.Sprintf("K=%d %s", k, tc.name), tc.f)
				checkGuards(t, fmt.Sprintf("K=%d %s", k, tc.name), mwhole)
			}
			// A Data slice shorter than D·Stride is a corrupt Matrix: panic,
			// do not read past it.
			bad := &Matrix{D: 4, K: k, Stride: s, Data: m.Data[:3*s]}
			mustPanic(t, fmt.Sprintf("K=%d short Data", k), func() { bad.Scores(dst, ok) })
			mustPanic(t, fmt.Sprintf("K=%d short Data", k), func() { bad.AddOuter(c, &ok) })
			checkGuards(t, fmt.Sprintf("K=%d short Data", k), mwhole)
		}
	})
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if recover() == nil {
			t.Errorf("%s: did not panic", name)
		}
	}()
	f()
}

// TestKernelAllocs pins the allocation count of one SGD step's kernels at 0.
func TestKernelAllocs(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 5))
		for _, k := range []int{1, 10, 100} {
			m := NewMatrix(785, k)
			ref := newDense(k, 785)
			randFill(rng, m, ref)
			x := mnistVector(rng, 150)
			dst := make([]float32, m.Stride)
			c := make([]float32, m.Stride)
			for kk := 0; kk < k; kk++ {
				c[kk] = 1e-3
			}
			for _, tc := range []struct {
				name string
				f    func()
			}{
				{"Scores", func() { m.Scores(dst, x) }},
				{"AddToFace", func() { m.AddToFace(k-1, 1e-3, x) }},
				{"AddOuter", func() { m.AddOuter(c, &x) }},
			} {
				if n := testing.AllocsPerRun(100, tc.f); n != 0 {
					t.Errorf("K=%d %s: %v allocs per run, want 0", k, tc.name, n)
				}
			}
		}
	})
}

// TestAddOuterPaddingOfC: c's padding must be 0, but if it is not, no
// implementation writes into the padding columns of W.
func TestAddOuterPaddingOfC(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		m := NewMatrix(4, 10)
		c := make([]float32, m.Stride)
		for i := range c {
			c[i] = 1
		}
		m.AddOuter(c, &Vector{Idx: []uint32{1, 3}, Val: []float32{2, 3}})
		x := map[int]float32{1: 2, 3: 3}
		for j := 0; j < m.D; j++ {
			for k, v := range m.Row(j) {
				want := float32(0)
				if k < m.K {
					want = x[j] // c[k] = 1
				}
				if v != want {
					t.Errorf("W[%d][%d] = %v, want %v", j, k, v, want)
				}
			}
		}
	})
}
