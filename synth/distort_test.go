package synth

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// distortInput is a small sparse data set: feature 3 is never stored, row 1
// stores nothing, feature 4 is stored as an explicit 0 once.
func distortInput() *sparsevec.CSR {
	var m sparsevec.CSR
	m.Append(1, sparsevec.Vector{Idx: []uint32{1, 2, 5}, Val: []float32{0.5, -1, 3}})
	m.Append(-1, sparsevec.Vector{})
	m.Append(1, sparsevec.Vector{Idx: []uint32{2, 4}, Val: []float32{0.25, 0}})
	m.Append(-1, sparsevec.Vector{Idx: []uint32{1, 4, 5}, Val: []float32{-2, 7.5, 1e-3}})
	return &m
}

func TestDistortExact(t *testing.T) {
	src := distortInput()
	dst, m := Distort(src, 7)
	if m.Dim() != 5 || len(m.Offset) != 5 {
		t.Fatalf("map of %d/%d features, want 5", len(m.Scale), len(m.Offset))
	}
	if !reflect.DeepEqual(dst.Labels, src.Labels) {
		t.Fatalf("labels %v, want %v", dst.Labels, src.Labels)
	}
	if dst.Dim != 6 || dst.NNZ() != 5*src.Rows() {
		t.Fatalf("Dim %d, nnz %d: want 6 and every feature of every row (%d)", dst.Dim, dst.NNZ(), 5*src.Rows())
	}
	for r := range src.Rows() {
		dense := make([]float32, 5)
		stored := make([]bool, 5)
		x := src.Row(r)
		for i, j := range x.Idx {
			dense[j-1], stored[j-1] = x.Val[i], true
		}
		y := dst.Row(r)
		for j := range 5 {
			if y.Idx[j] != uint32(j+1) {
				t.Fatalf("row %d: index %d at %d", r, y.Idx[j], j)
			}
			a, b := m.Scale[j], m.Offset[j]
			want := float32(float64(a*float64(dense[j])) + b)
			if !stored[j] && want != float32(b) {
				t.Fatalf("row %d feature %d: absent entry maps to %v, not b = %v", r, j+1, want, b)
			}
			if y.Val[j] != want {
				t.Errorf("row %d feature %d: %v -> %v, want %v·%v + %v = %v", r, j+1, dense[j], y.Val[j], a, dense[j], b, want)
			}
		}
	}
}

// TestRandomAffineDraws recomputes the map from the PCG stream the doc
// comment names, and checks its ranges.
func TestRandomAffineDraws(t *testing.T) {
	maxAbs := []float64{1, 0, 250, 18000, 1e-3}
	m := RandomAffine(maxAbs, 42)
	src := rand.NewPCG(42, 0x64697374)
	for j, mj := range maxAbs {
		u := float64(src.Uint64()>>11) * 0x1p-53
		v := float64(src.Uint64()>>11) * 0x1p-53
		a := float64(float32(math.Pow(10, -2+6*u)))
		if mj == 0 {
			mj = 1
		}
		b := float64(float32(a * (10*v - 5) * mj))
		if m.Scale[j] != a || m.Offset[j] != b {
			t.Errorf("feature %d: a, b = %v, %v; want %v, %v", j+1, m.Scale[j], m.Offset[j], a, b)
		}
	}
	// Ranges and spread over many features.
	n := 30000
	big := make([]float64, n)
	for j := range big {
		big[j] = float64(j%7) + 0.5
	}
	m = RandomAffine(big, 1)
	var below1, negOff int
	for j, a := range m.Scale {
		if !(a >= DistortMinScale*(1-1e-6) && a <= DistortMaxScale*(1+1e-6)) || float64(float32(a)) != a {
			t.Fatalf("feature %d: scale %v outside [1e-2, 1e4] or not a float32", j+1, a)
		}
		if b := m.Offset[j]; math.Abs(b) > DistortMaxShift*a*big[j]*(1+1e-6) || float64(float32(b)) != b {
			t.Fatalf("feature %d: offset %v beyond 5·a·m = %v or not a float32", j+1, b, 5*a*big[j])
		}
		if a < 1 {
			below1++
		}
		if m.Offset[j] < 0 {
			negOff++
		}
	}
	// log-uniform over 6 decades: 2 of them below 1; offsets symmetric.
	if f := float64(below1) / float64(n); math.Abs(f-1.0/3) > 0.02 {
		t.Errorf("%.3f of the scales below 1, want about 1/3 (log-uniform)", f)
	}
	if f := float64(negOff) / float64(n); math.Abs(f-0.5) > 0.02 {
		t.Errorf("%.3f of the offsets negative, want about 1/2", f)
	}
}

func TestDistortDeterministic(t *testing.T) {
	a, ma := Distort(distortInput(), 3)
	b, mb := Distort(distortInput(), 3)
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ma, mb) {
		t.Fatal("the same seed gave different outputs")
	}
	c, mc := Distort(distortInput(), 4)
	if reflect.DeepEqual(ma, mc) || reflect.DeepEqual(a.Val, c.Val) {
		t.Fatal("seeds 3 and 4 gave the same map")
	}
	// The map of a feature does not depend on the data, only on its
	// magnitude: the same data with a larger last feature keeps the scales.
	in := distortInput()
	in.Append(1, sparsevec.Vector{Idx: []uint32{7}, Val: []float32{1}})
	_, md := Distort(in, 3)
	if !reflect.DeepEqual(md.Scale[:5], ma.Scale) {
		t.Error("adding a feature changed the scales of the others")
	}
}

func TestDistortEmpty(t *testing.T) {
	var in sparsevec.CSR
	in.Append(1, sparsevec.Vector{})
	out, m := Distort(&in, 1)
	if m.Dim() != 0 || out.Rows() != 1 || out.NNZ() != 0 || out.Labels[0] != 1 {
		t.Fatalf("no features: map of %d, %d rows, %d nonzeros", m.Dim(), out.Rows(), out.NNZ())
	}
}

func TestAffineApplyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Apply of a 2-feature map to a row with feature 5 did not panic")
		}
	}()
	m := RandomAffine([]float64{1, 1}, 1)
	var dst sparsevec.CSR
	m.Apply(&dst, distortInput())
}
