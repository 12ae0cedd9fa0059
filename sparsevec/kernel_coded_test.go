package sparsevec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randCoded returns a coded row of nnz ascending indices below d, its
// codes drawn from a dictionary of random values (some with magnitudes far
// apart, so that rounding depends on the order of the sums), and the row
// decoded. Codes may point at unused dictionary entries.
func randCoded(rng *rand.Rand, d, nnz int) (CodedRow, Vector) {
	v := randVector(rng, d, nnz)
	dict := new([256]float32)
	for i := range dict {
		dict[i] = float32((2*rng.Float64() - 1) * math.Ldexp(1, rng.IntN(21)-10))
	}
	x := CodedRow{Idx: make([]uint16, nnz), Codes: make([]uint8, nnz), Dict: dict}
	for i, j := range v.Idx {
		x.Idx[i] = uint16(j)
		x.Codes[i] = uint8(rng.IntN(256))
	}
	return x, x.Decode(nil, nil)
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestCodedKernels checks the Coded methods bit for bit against the
// Vector methods on the decoded row, with guard words around dst and W.
func TestCodedKernels(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 7))
		for _, k := range kernelShapes {
			for _, nnz := range append(nnzCounts, 150, 400) {
				d := max(testD, nnz+1)
				name := fmt.Sprintf("K=%d,nnz=%d", k, nnz)
				x, v := randCoded(rng, d, nnz)
				m, mwhole := guardedMatrix(d, k)
				for j := range d {
					for c := range k {
						m.Data[j*m.Stride+c] = float32((2*rng.Float64() - 1) * math.Ldexp(1, rng.IntN(41)-20))
					}
				}
				ref := &Matrix{D: d, K: k, Stride: m.Stride, Data: append([]float32(nil), m.Data...)}

				got, gwhole := guarded(m.Stride)
				want := make([]float32, m.Stride)
				s, b := float32(0.75), float32(1.5)
				gb := m.ScoresArgmaxCoded(got, &x, s, b)
				wb := ref.ScoresArgmax(want, &v, s, b)
				checkGuards(t, name+" dst", gwhole)
				if gb != wb || !sameBits(got, want) {
					t.Errorf("%s: ScoresArgmaxCoded = %d %v, want %d %v", name, gb, got, wb, want)
				}

				c := make([]float32, m.Stride)
				for j := range k {
					if rng.IntN(3) > 0 {
						c[j] = float32(rng.NormFloat64())
					}
				}
				m.AddOuterCoded(c, &x)
				ref.AddOuter(c, &v)
				m.AddToFaceCoded(k-1, -0.3, &x)
				ref.AddToFace(k-1, -0.3, v)
				checkGuards(t, name+" W", mwhole)
				if !sameBits(m.Data, ref.Data) {
					t.Errorf("%s: AddOuterCoded/AddToFaceCoded differ from AddOuter/AddToFace", name)
				}
			}
		}
	})
}

// TestCodedKernelsBadIndex checks that an index >= D panics, also when the
// row is unsorted so that only the kernel's own bounds check sees it, and
// that W's guard words stay intact.
func TestCodedKernelsBadIndex(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		dict := new([256]float32)
		dict[1] = 2
		for _, k := range []int{3, 10, 16, 40} {
			for _, idx := range [][]uint16{{5}, {1, 9, 2}, {1, 2, 3, 4, 65535, 5, 6}, {65535, 1}} {
				x := CodedRow{Idx: idx, Codes: make([]uint8, len(idx)), Dict: dict}
				for i := range x.Codes {
					x.Codes[i] = 1
				}
				m, whole := guardedMatrix(5, k)
				for name, f := range map[string]func(){
					"ScoresArgmaxCoded": func() { m.ScoresArgmaxCoded(make([]float32, m.Stride), &x, 1, 1) },
					"AddOuterCoded":     func() { m.AddOuterCoded(make([]float32, m.Stride), &x) },
					"AddToFaceCoded":    func() { m.AddToFaceCoded(0, 1, &x) },
				} {
					func() {
						defer func() {
							if recover() == nil {
								t.Errorf("K=%d %v %s: no panic", k, idx, name)
							}
						}()
						f()
					}()
				}
				checkGuards(t, fmt.Sprintf("K=%d %v", k, idx), whole)
			}
		}
	})
}

// TestCodedKernelsAllocs pins the Coded methods at zero allocations.
func TestCodedKernelsAllocs(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 3))
		x, _ := randCoded(rng, 784, 150)
		m := NewMatrix(784, 10)
		dst, c := make([]float32, m.Stride), make([]float32, m.Stride)
		c[2] = 1
		if a := testing.AllocsPerRun(100, func() {
			m.ScoresArgmaxCoded(dst, &x, 0.5, 1)
			m.AddOuterCoded(c, &x)
			m.AddToFaceCoded(3, 1, &x)
		}); a != 0 {
			t.Errorf("%v allocations per call", a)
		}
	})
}

// TestPackedCodedRow checks that CodedRow gives back Row's row.
func TestPackedCodedRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m := &CSR{Ptr: []int{0}}
	for range 20 {
		v := randVector(rng, 300, rng.IntN(40))
		for i := range v.Val {
			v.Val[i] = float32(rng.IntN(10)) / 4
		}
		m.Idx = append(m.Idx, v.Idx...)
		m.Val = append(m.Val, v.Val...)
		m.Ptr = append(m.Ptr, len(m.Idx))
		m.Labels = append(m.Labels, 1)
	}
	p := Pack(m, nil, PackCompact)
	var buf Vector
	for r := range p.Rows() {
		x, ok := p.CodedRow(r)
		if !ok {
			t.Fatal("PackCompact row not coded")
		}
		want := p.Row(r, &buf)
		if got := x.Decode(nil, nil); !sameVector(got, want) {
			t.Errorf("row %d: %v, want %v", r, got, want)
		}
	}
	if _, ok := Pack(m, nil, PackNarrow).CodedRow(0); ok {
		t.Error("PackNarrow row reported coded")
	}
}
