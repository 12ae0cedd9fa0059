package sparsevec

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// checkCSR verifies m's invariants and that row r equals rows[r] with
// label labels[r].
func checkCSR(t *testing.T, name string, m *CSR, labels []float32, rows []Vector) {
	t.Helper()
	if m.Rows() != len(rows) {
		t.Fatalf("%s: Rows() = %d, want %d", name, m.Rows(), len(rows))
	}
	nnz, dim := 0, 0
	for r, x := range rows {
		nnz += len(x.Idx)
		if len(x.Idx) > 0 {
			dim = max(dim, int(x.MaxIndex())+1)
		}
		if m.Labels[r] != labels[r] {
			t.Errorf("%s: label %d = %v, want %v", name, r, m.Labels[r], labels[r])
		}
		if got := m.Row(r); !sameVector(got, x) {
			t.Errorf("%s: Row(%d) = %v, want %v", name, r, got, x)
		}
	}
	if m.NNZ() != nnz || len(m.Val) != nnz {
		t.Errorf("%s: NNZ() = %d, len(Val) = %d, want %d", name, m.NNZ(), len(m.Val), nnz)
	}
	if m.Dim != dim {
		t.Errorf("%s: Dim = %d, want %d", name, m.Dim, dim)
	}
	if len(rows) > 0 && (len(m.Ptr) != len(rows)+1 || m.Ptr[0] != 0 || m.Ptr[len(rows)] != nnz) {
		t.Errorf("%s: Ptr = %v", name, m.Ptr)
	}
}

func TestCSRAppend(t *testing.T) {
	var m CSR
	checkCSR(t, "zero", &m, nil, nil)
	rng := rand.New(rand.NewPCG(9, 9))
	var labels []float32
	var rows []Vector
	for r, nnz := range []int{3, 0, 7, 1, 0, 12} {
		x := randVector(rng, 30, nnz)
		m.Append(float32(r%2), x)
		labels = append(labels, float32(r%2))
		rows = append(rows, cloneVector(x))
		// Append copies: clobbering the caller's row changes nothing.
		for i := range x.Val {
			x.Val[i] = 99
		}
	}
	checkCSR(t, "appended", &m, labels, rows)

	// A row's capacity ends at the row, so appending to it cannot
	// overwrite the next row.
	r0 := m.Row(0)
	if cap(r0.Idx) != len(r0.Idx) || cap(r0.Val) != len(r0.Val) {
		t.Errorf("Row(0) caps %d, %d, want %d", cap(r0.Idx), cap(r0.Val), len(r0.Idx))
	}
	_ = append(r0.Idx, 1000)
	checkCSR(t, "after append to a row", &m, labels, rows)

	mustPanic(t, "Row(-1)", func() { m.Row(-1) })
	mustPanic(t, "Row(Rows())", func() { m.Row(m.Rows()) })
}

func TestCSRAppendCSR(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	build := func(nnzs ...int) (*CSR, []float32, []Vector) {
		var m CSR
		var labels []float32
		var rows []Vector
		for _, nnz := range nnzs {
			x := randVector(rng, 20+rng.IntN(20), nnz)
			l := float32(rng.IntN(5))
			m.Append(l, x)
			labels = append(labels, l)
			rows = append(rows, cloneVector(x))
		}
		return &m, labels, rows
	}
	for _, tc := range []struct {
		name string
		a, b []int
	}{
		{"both", []int{2, 5}, []int{0, 3, 4}},
		{"into empty", nil, []int{3, 1}},
		{"empty other", []int{4}, nil},
		{"empty rows", []int{0}, []int{0, 0}},
		{"both empty", nil, nil},
	} {
		m, la, ra := build(tc.a...)
		o, lb, rb := build(tc.b...)
		o0 := &CSR{Labels: slices.Clone(o.Labels), Ptr: slices.Clone(o.Ptr),
			Idx: slices.Clone(o.Idx), Val: slices.Clone(o.Val), Dim: o.Dim}
		m.AppendCSR(o)
		checkCSR(t, tc.name, m, append(la, lb...), append(ra, rb...))
		checkCSR(t, tc.name+" (other unchanged)", o, o0.Labels, rb)
	}

	// Appending a block to itself doubles it.
	m, l, r := build(3, 0, 6)
	m.AppendCSR(m)
	checkCSR(t, "self", m, append(l, l...), append(r, r...))

	// Dim is the larger of the two.
	m = &CSR{}
	m.Append(1, Vector{Idx: []uint32{50}, Val: []float32{1}})
	o := &CSR{}
	o.Append(1, Vector{Idx: []uint32{7}, Val: []float32{1}})
	m.AppendCSR(o)
	if m.Dim != 51 {
		t.Errorf("Dim = %d, want 51", m.Dim)
	}
}

func TestCSRReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	var m CSR
	for range 10 {
		m.Append(1, randVector(rng, 50, 20))
	}
	cl, ci, cv, cp := cap(m.Labels), cap(m.Idx), cap(m.Val), cap(m.Ptr)
	m.Reset()
	checkCSR(t, "reset", &m, nil, nil)
	if cap(m.Labels) != cl || cap(m.Idx) != ci || cap(m.Val) != cv || cap(m.Ptr) != cp {
		t.Errorf("Reset dropped capacity")
	}
	x := randVector(rng, 10, 4)
	m.Append(-1, x)
	checkCSR(t, "reuse", &m, []float32{-1}, []Vector{x})

	// Refilling a reset block allocates nothing.
	rows := make([]Vector, 10)
	for i := range rows {
		rows[i] = randVector(rng, 50, 20)
	}
	if n := testing.AllocsPerRun(20, func() {
		m.Reset()
		for _, x := range rows {
			m.Append(0, x)
		}
	}); n != 0 {
		t.Errorf("Reset+Append: %v allocs per run, want 0", n)
	}
}
