package sparsevec

import "fmt"

// Lanes is the SIMD width, in float32, that Stride is padded to.
const Lanes = 8

// Matrix is a dense D×K weight matrix stored feature-major: the K weights of
// feature j are Data[j*Stride : j*Stride+K], contiguous, followed by
// Stride-K padding columns that are always zero. Row 0 is the bias row by
// convention of the learners (LIBSVM indices start at 1).
type Matrix struct {
	D, K, Stride int
	Data         []float32
}

// StrideFor returns the row stride used for k faces: k rounded up to a
// multiple of Lanes.
func StrideFor(k int) int { return (k + Lanes - 1) / Lanes * Lanes }

// NewMatrix returns a zero d×k matrix. It panics if d < 0 or k < 1.
func NewMatrix(d, k int) *Matrix {
	if d < 0 || k < 1 {
		panic(fmt.Sprintf("sparsevec: bad matrix shape %d×%d", d, k))
	}
	s := StrideFor(k)
	return &Matrix{D: d, K: k, Stride: s, Data: make([]float32, d*s)}
}

// At returns W[j][k].
func (m *Matrix) At(j, k int) float32 {
	if uint(k) >= uint(m.K) {
		panic("sparsevec: face index out of range")
	}
	return m.Data[j*m.Stride+k]
}

// Set sets W[j][k] = v.
func (m *Matrix) Set(j, k int, v float32) {
	if uint(k) >= uint(m.K) {
		panic("sparsevec: face index out of range")
	}
	m.Data[j*m.Stride+k] = v
}

// Row returns the Stride weights of feature j (the last Stride-K are padding).
func (m *Matrix) Row(j int) []float32 {
	return m.Data[j*m.Stride : (j+1)*m.Stride : (j+1)*m.Stride]
}

// Grow makes D at least d, appending zero feature rows. Existing weights
// are kept; the backing array grows geometrically so repeated small growth
// is amortised O(1) per row.
func (m *Matrix) Grow(d int) { m.GrowMax(d, 0) }

// GrowMax is Grow with a bound on the backing array: it grows
// geometrically as Grow does, but never makes room for more than
// max(d, maxD) feature rows, so that a caller holding D below maxD holds
// at most maxD·Stride floats. maxD <= 0 sets no bound.
func (m *Matrix) GrowMax(d, maxD int) {
	if d <= m.D {
		return
	}
	n := d * m.Stride
	if n <= cap(m.Data) {
		m.Data = m.Data[:n]
		clear(m.Data[m.D*m.Stride:])
	} else {
		c := 2 * cap(m.Data)
		if maxD > 0 {
			c = min(c, maxD*m.Stride)
		}
		if c < n {
			c = n
		}
		nd := make([]float32, n, c)
		copy(nd, m.Data)
		m.Data = nd
	}
	m.D = d
}

// Scale multiplies every weight by a.
func (m *Matrix) Scale(a float32) {
	d := m.Data // a local slice: m.Data[i] would be bounds-checked every time
	for i := range d {
		d[i] *= a
	}
}

// Zero sets every weight to 0.
func (m *Matrix) Zero() { clear(m.Data) }

// checkVec panics unless x has a value for every index and its last index
// is below m.D, and returns the D·Stride weights with capacity clipped to
// length. Indices are ascending, so checking the last one suffices for a
// valid x; the kernels still bound every index by the clipped weights, so
// an unsorted x with an index >= D panics instead of reaching past them.
//
// The panics with formatted messages are out of line in panicIndex.
func (m *Matrix) checkVec(x *Vector) []float32 {
	if len(x.Val) < len(x.Idx) {
		panic("sparsevec: vector has fewer values than indices")
	}
	return checkLast(m, x.Idx)
}

// checkLast panics unless the last of the ascending indices idx is below
// m.D, and returns the D·Stride weights with capacity clipped to length
// (checkVec and checkCoded).
func checkLast[I uint16 | uint32](m *Matrix, idx []I) []float32 {
	if n := len(idx); n > 0 && int(idx[n-1]) >= m.D {
		panicIndex(idx[n-1:], m.D)
	}
	n := m.D * m.Stride
	if len(m.Data) < n {
		panic("sparsevec: Matrix Data shorter than D·Stride")
	}
	return m.Data[:n:n]
}

// panicIndex panics with the first index of idx that is not below d. The
// asm kernels' callers use it when the kernel finds one, which happens only
// for an unsorted x.
//
//go:noinline
func panicIndex[I uint16 | uint32](idx []I, d int) {
	for _, j := range idx {
		if int(j) >= d {
			panic(fmt.Sprintf("sparsevec: feature index %d out of range [0,%d)", j, d))
		}
	}
	panic("sparsevec: feature index out of range")
}

// Scores sets dst[k] = Σ_i x.Val[i]·W[x.Idx[i]][k] for k < Stride (padding
// entries come out 0). It panics if len(dst) < Stride or an index of x is
// not below D. It does not allocate.
//
// The sum is accumulated in float32; its order, and whether products are
// fused into the additions, depend on the kernel (see the package
// documentation), so results may differ between machines in the last bits,
// always within n·2⁻²⁴·Σ_i |x_i·W[x.Idx[i]][k]| of the exact sum for n
// nonzeros.
func (m *Matrix) Scores(dst []float32, x Vector) {
	if len(dst) < m.Stride {
		panic("sparsevec: Scores dst shorter than Stride")
	}
	w := m.checkVec(&x)
	scores(dst[:m.Stride], w, m.K, x.Idx, x.Val[:len(x.Idx)])
}

// ScoresArgmax sets dst[k] = s·(Σ_i x.Val[i]·W[x.Idx[i]][k] + b·W[0][k])
// for k < K and dst[K:Stride] = 0, and returns the first k < K with the
// largest dst[k]. These are the scores of x under the weights s·W when
// row 0 is the weight of a bias feature of value b (a linear machine
// whose weights carry a lazy scale s). The sum is Scores' sum, rounded as
// Scores rounds it; b·W[0][k], the addition and the multiplication by s
// are then rounded to float32 one by one, never fused. The argmax is that
// of the scan "best = k if dst[k] > dst[best]" from best = 0: a NaN
// dst[0] gives 0, any other NaN is never chosen, and ties go to the
// lowest k. It panics if len(dst) < Stride, if D = 0 (no bias row) or if
// an index of x is not below D. It does not allocate.
//
// x is passed by pointer, as to AddOuter and the Coded methods: beside the
// receiver and a slice, a row (six or seven words) does not fit the
// argument registers of Go's calling convention and would be copied
// through memory on every call, which costs an SGD step about 15 %.
func (m *Matrix) ScoresArgmax(dst []float32, x *Vector, s, b float32) int {
	m.checkArgmax(dst)
	w := m.checkVec(x)
	return scoresArgmax(dst[:m.Stride], w, m.K, x.Idx, x.Val[:len(x.Idx)], s, b)
}

// checkArgmax panics unless dst holds Stride scores and m has a bias row
// (ScoresArgmax, ScoresArgmaxCoded).
func (m *Matrix) checkArgmax(dst []float32) {
	if len(dst) < m.Stride {
		panic("sparsevec: ScoresArgmax dst shorter than Stride")
	}
	if m.D < 1 {
		panic("sparsevec: ScoresArgmax on a matrix without a bias row")
	}
}

// AddToFace adds a·x to face k: W[j][k] += a·x_j for every nonzero j.
// It panics if k is not a face or an index of x is not below D.
func (m *Matrix) AddToFace(k int, a float32, x Vector) {
	if uint(k) >= uint(m.K) {
		panic("sparsevec: face index out of range")
	}
	w := m.checkVec(&x)
	addToFaceGeneric(w, m.Stride, k, a, x.Idx, x.Val[:len(x.Idx)])
}

// AddOuter performs the rank-one update W[j][:] += x_j·c[:] for every
// nonzero j; faces with c[k] == 0 are unchanged. c must have length
// >= Stride with zero padding entries. It panics if c is shorter, or if an
// index of x is not below D. It does not allocate. x is passed by pointer
// (see ScoresArgmax).
func (m *Matrix) AddOuter(c []float32, x *Vector) {
	if len(c) < m.Stride {
		panic("sparsevec: AddOuter coefficient vector shorter than Stride")
	}
	w := m.checkVec(x)
	addOuter(w, c[:m.Stride], m.K, x.Idx, x.Val[:len(x.Idx)])
}
