package csrconv

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/james-bowman/sparse"

	"github.com/polyhedral/cpm/sparsevec"
)

// randomCSR returns a rows×(dim−1)-column block with about density of
// each row's columns set, values exact in float32.
func randomCSR(rng *rand.Rand, rows, dim int, density float64) *sparsevec.CSR {
	var c sparsevec.CSR
	var x sparsevec.Vector
	for range rows {
		x.Idx, x.Val = x.Idx[:0], x.Val[:0]
		for j := 1; j < dim; j++ {
			if rng.Float64() < density {
				x.Idx = append(x.Idx, uint32(j))
				x.Val = append(x.Val, float32(rng.NormFloat64()))
			}
		}
		c.Append(float32(2*rng.IntN(2)-1), x)
	}
	return &c
}

func equalCSR(t *testing.T, got, want *sparsevec.CSR) {
	t.Helper()
	if got.Rows() != want.Rows() || got.Dim != want.Dim ||
		!slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Idx, want.Idx) ||
		!slices.Equal(got.Val, want.Val) || (got.Rows() > 0 && !slices.Equal(got.Ptr, want.Ptr)) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// TestRoundTripProperty converts random blocks to *sparse.CSR and back, and
// checks every element against At of the gonum matrix.
func TestRoundTripProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		rows, dim := rng.IntN(20), 1+rng.IntN(30)
		c := randomCSR(rng, rows, dim, rng.Float64())
		m, err := ToSparse(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r, cols := m.Dims(); r != rows || cols != max(c.Dim-1, 0) {
			t.Fatalf("trial %d: dims %d×%d, want %d×%d", trial, r, cols, rows, max(c.Dim-1, 0))
		}
		if m.NNZ() != c.NNZ() {
			t.Fatalf("trial %d: %d nonzeros, want %d", trial, m.NNZ(), c.NNZ())
		}
		for i := range rows {
			dense := make([]float64, dim)
			x := c.Row(i)
			for k, j := range x.Idx {
				dense[j] = float64(x.Val[k])
			}
			for j := 1; j < c.Dim; j++ {
				if got := m.At(i, j-1); got != dense[j] {
					t.Fatalf("trial %d: At(%d, %d) = %v, want %v", trial, i, j-1, got, dense[j])
				}
			}
		}
		back, err := FromSparse(m, c.Labels, Options{})
		if err != nil {
			t.Fatal(err)
		}
		equalCSR(t, back, c)
	}
}

// TestFromSparseUnsorted checks that a row stored out of order comes out
// ascending, and that a repeated column is refused.
func TestFromSparseUnsorted(t *testing.T) {
	m := sparse.NewCSR(2, 5, []int{0, 3, 4}, []int{4, 0, 2, 1}, []float64{4, 0.5, 2, 1})
	c, err := FromSparse(m, []float32{1, -1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &sparsevec.CSR{Labels: []float32{1, -1}, Ptr: []int{0, 3, 4},
		Idx: []uint32{1, 3, 5, 2}, Val: []float32{0.5, 2, 4, 1}, Dim: 6}
	equalCSR(t, c, want)

	dup := sparse.NewCSR(1, 5, []int{0, 3}, []int{4, 1, 4}, []float64{1, 2, 3})
	if _, err := FromSparse(dup, []float32{1}, Options{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("repeated column: error %v, want ErrMalformed", err)
	}
}

// TestSharing checks which arrays the conversions share.
func TestSharing(t *testing.T) {
	c := randomCSR(rand.New(rand.NewPCG(3, 4)), 5, 10, 0.5)
	m, err := ToSparse(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw := m.RawMatrix()
	if &raw.Indptr[0] != &c.Ptr[0] || cap(raw.Indptr) != c.Rows()+1 {
		t.Error("ToSparse copied the row pointers or kept their spare capacity")
	}
	back, err := FromSparse(m, c.Labels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if &back.Ptr[0] != &c.Ptr[0] || &back.Labels[0] != &c.Labels[0] {
		t.Error("FromSparse copied the row pointers or the labels")
	}
	back.Append(1, sparsevec.Vector{Idx: []uint32{1}, Val: []float32{1}})
	if c.Rows() != 5 || len(raw.Indptr) != 6 {
		t.Error("appending to the result changed the source")
	}
}

func TestFromSparseErrors(t *testing.T) {
	ok := func() *sparse.CSR { return sparse.NewCSR(1, 3, []int{0, 2}, []int{0, 2}, []float64{1, 2}) }
	for _, c := range []struct {
		name   string
		m      *sparse.CSR
		labels []float32
		opt    Options
		want   error
		pos    [2]int // row, column of a *ValueError; {-1} for none
	}{
		{"NaN", sparse.NewCSR(1, 3, []int{0, 1}, []int{2}, []float64{math.NaN()}), []float32{1}, Options{}, ErrNonFinite, [2]int{0, 2}},
		{"Inf", sparse.NewCSR(1, 3, []int{0, 1}, []int{1}, []float64{math.Inf(-1)}), []float32{1}, Options{Round: true}, ErrNonFinite, [2]int{0, 1}},
		{"beyond float32", sparse.NewCSR(1, 3, []int{0, 1}, []int{0}, []float64{1e39}), []float32{1}, Options{Round: true}, ErrNonFinite, [2]int{0, 0}},
		{"inexact", sparse.NewCSR(2, 3, []int{0, 0, 1}, []int{1}, []float64{0.1}), []float32{1, 1}, Options{}, ErrInexact, [2]int{1, 1}},
		{"NaN label", ok(), []float32{float32(math.NaN())}, Options{}, ErrNonFinite, [2]int{0, -1}},
		{"too few labels", ok(), nil, Options{}, ErrLabels, [2]int{-1}},
		{"too many labels", ok(), []float32{1, 1}, Options{}, ErrLabels, [2]int{-1}},
		{"too wide", sparse.NewCSR(1, MaxCols+1, []int{0, 1}, []int{MaxCols}, []float64{1}), []float32{1}, Options{}, ErrTooWide, [2]int{-1}},
		{"column out of range", sparse.NewCSR(1, 3, []int{0, 1}, []int{3}, []float64{1}), []float32{1}, Options{}, ErrMalformed, [2]int{-1}},
		{"negative column", sparse.NewCSR(1, 3, []int{0, 1}, []int{-1}, []float64{1}), []float32{1}, Options{}, ErrMalformed, [2]int{-1}},
		{"short pointers", sparse.NewCSR(2, 3, []int{0, 1}, []int{0}, []float64{1}), []float32{1, 1}, Options{}, ErrMalformed, [2]int{-1}},
		{"decreasing pointers", sparse.NewCSR(2, 3, []int{0, 1, 0}, []int{0}, []float64{1}), []float32{1, 1}, Options{}, ErrMalformed, [2]int{-1}},
		{"pointer past values", sparse.NewCSR(1, 3, []int{0, 2}, []int{0, 1}, []float64{1}), []float32{1}, Options{}, ErrMalformed, [2]int{-1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromSparse(c.m, c.labels, c.opt)
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			var ve *ValueError
			if got := errors.As(err, &ve); got != (c.pos[0] >= 0) {
				t.Fatalf("error %v: *ValueError %v, want %v", err, got, c.pos[0] >= 0)
			}
			if ve != nil && (ve.Row != c.pos[0] || ve.Col != c.pos[1]) {
				t.Errorf("error at row %d column %d, want %v", ve.Row, ve.Col, c.pos)
			}
		})
	}
}

// TestRound checks that Options.Round rounds to the nearest float32.
func TestRound(t *testing.T) {
	vals := []float64{0.1, 1 + 0x1p-24, 1 + 0x1p-23 + 0x1p-25, 1e-50, -math.MaxFloat32}
	m := sparse.NewCSR(1, 5, []int{0, 5}, []int{0, 1, 2, 3, 4}, vals)
	c, err := FromSparse(m, []float32{1}, Options{Round: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0.1, 1, 1 + 0x1p-23, 0, -math.MaxFloat32}
	if !slices.Equal(c.Val, want) {
		t.Errorf("rounded %v to %v, want %v", vals, c.Val, want)
	}
}

func TestToSparseErrors(t *testing.T) {
	c := &sparsevec.CSR{Labels: []float32{1}, Ptr: []int{0, 2}, Idx: []uint32{2, 7}, Val: []float32{1, 2}, Dim: 8}
	if _, err := ToSparse(c, 6); !errors.Is(err, ErrTooWide) {
		t.Errorf("index 7 in 6 columns: error %v, want ErrTooWide", err)
	}
	if m, err := ToSparse(c, 10); err != nil {
		t.Error(err)
	} else if _, cols := m.Dims(); cols != 10 {
		t.Errorf("%d columns, want 10", cols)
	}
	zero := &sparsevec.CSR{Labels: []float32{1}, Ptr: []int{0, 1}, Idx: []uint32{0}, Val: []float32{1}, Dim: 1}
	if _, err := ToSparse(zero, 0); !errors.Is(err, ErrMalformed) {
		t.Errorf("index 0: error %v, want ErrMalformed", err)
	}
	short := &sparsevec.CSR{Labels: []float32{1, 1}, Ptr: []int{0, 1}, Idx: []uint32{1}, Val: []float32{1}, Dim: 2}
	if _, err := ToSparse(short, 0); !errors.Is(err, ErrMalformed) {
		t.Errorf("short Ptr: error %v, want ErrMalformed", err)
	}
}

// TestEmpty converts blocks without rows and without nonzeros.
func TestEmpty(t *testing.T) {
	var empty sparsevec.CSR
	m, err := ToSparse(&empty, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 0 || c != 0 {
		t.Errorf("empty block: %d×%d matrix", r, c)
	}
	back, err := FromSparse(m, nil, Options{})
	if err != nil || back.Rows() != 0 || back.Dim != 0 {
		t.Errorf("back: %+v, %v", back, err)
	}
	var blank sparsevec.CSR
	blank.Append(1, sparsevec.Vector{})
	blank.Append(-1, sparsevec.Vector{})
	m, err = ToSparse(&blank, 4)
	if err != nil {
		t.Fatal(err)
	}
	back, err = FromSparse(m, blank.Labels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	equalCSR(t, back, &blank)
}

func TestToSparseNegativeColsPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("ToSparse with cols -1 did not panic")
		}
	}()
	ToSparse(&sparsevec.CSR{}, -1)
}

// TestFromSparseProperty builds random matrices with the library's own
// DOK → CSR path, some values inexact in float32, and checks FromSparse
// element by element: exact values convert or the first inexact one is
// reported, and with Round every value is float32(v).
func TestFromSparseProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		rows, cols := 1+rng.IntN(15), 1+rng.IntN(40)
		dok := sparse.NewDOK(rows, cols)
		inexact := trial%3 == 0
		for range rng.IntN(rows * cols) {
			v := float64(float32(rng.NormFloat64()))
			if inexact {
				v = rng.NormFloat64()
			}
			dok.Set(rng.IntN(rows), rng.IntN(cols), v)
		}
		m := dok.ToCSR()
		labels := make([]float32, rows)
		c, err := FromSparse(m, labels, Options{Round: inexact})
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if c.NNZ() != m.NNZ() {
			t.Fatalf("trial %d: %d nonzeros, want %d", trial, c.NNZ(), m.NNZ())
		}
		maxIdx := 0
		for i := range rows {
			x := c.Row(i)
			for k := 1; k < len(x.Idx); k++ {
				if x.Idx[k] <= x.Idx[k-1] {
					t.Fatalf("trial %d: row %d indices %v not ascending", trial, i, x.Idx)
				}
			}
			for k, j := range x.Idx {
				if want := float32(m.At(i, int(j)-1)); x.Val[k] != want {
					t.Fatalf("trial %d: (%d, %d) = %v, want %v", trial, i, j-1, x.Val[k], want)
				}
				maxIdx = max(maxIdx, int(j))
			}
		}
		if want := maxIdx + 1; m.NNZ() > 0 && c.Dim != want {
			t.Fatalf("trial %d: Dim %d, want %d", trial, c.Dim, want)
		}
		if inexact && m.NNZ() > 0 {
			if _, err := FromSparse(m, labels, Options{}); !errors.Is(err, ErrInexact) {
				t.Fatalf("trial %d: without Round: %v, want ErrInexact", trial, err)
			}
		}
	}
}
