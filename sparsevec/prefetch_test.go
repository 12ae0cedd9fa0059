package sparsevec

import (
	"math"
	"reflect"
	"testing"
)

// Prefetching is a hint: it must not fault on any row, including empty
// rows, the last row and out-of-range row numbers, and must not allocate.
func TestPrefetchIsHarmless(t *testing.T) {
	var m CSR
	m.Append(1, Vector{Idx: []uint32{1, 5}, Val: []float32{1, 2}})
	m.Append(-1, Vector{})
	m.Append(1, Vector{Idx: []uint32{3}, Val: []float32{4}})
	for _, r := range []int{-1, 0, 1, 2, 3, 100} {
		m.PrefetchRow(r)
		m.PrefetchPtr(r)
	}
	var empty CSR
	empty.PrefetchRow(0)
	empty.PrefetchPtr(0)
	if a := testing.AllocsPerRun(100, func() { m.PrefetchRow(2); m.PrefetchPtr(1) }); a != 0 {
		t.Fatalf("prefetch allocates %v", a)
	}
}

func TestPermute(t *testing.T) {
	var m CSR
	m.Append(1, Vector{Idx: []uint32{1, 5}, Val: []float32{1, 2}})
	m.Append(-1, Vector{})
	m.Append(2, Vector{Idx: []uint32{3}, Val: []float32{4}})
	p := m.Permute([]int32{2, 0, 1})
	if p.Rows() != 3 || p.Labels[0] != 2 || p.Labels[1] != 1 || p.Labels[2] != -1 {
		t.Fatalf("labels %v", p.Labels)
	}
	if r := p.Row(1); len(r.Idx) != 2 || r.Idx[1] != 5 || r.Val[1] != 2 {
		t.Fatalf("row 1 = %+v", r)
	}
	if p.Row(2).Len() != 0 || p.Dim != 6 || p.NNZ() != 3 {
		t.Fatalf("row 2 %+v, dim %d, nnz %d", p.Row(2), p.Dim, p.NNZ())
	}
	if s := m.Permute([]int32{2}); s.Rows() != 1 || s.Dim != 4 {
		t.Fatalf("subset: %d rows, dim %d", s.Rows(), s.Dim)
	}
}

// PermuteInto gives Permute's rows whether dst's arrays are too small (it
// allocates) or large enough (it reuses them, not a byte of the old rows
// left behind).
func TestPermuteInto(t *testing.T) {
	var m CSR
	m.Append(1, Vector{Idx: []uint32{1, 5}, Val: []float32{1, 2}})
	m.Append(-1, Vector{})
	m.Append(2, Vector{Idx: []uint32{3}, Val: []float32{4}})
	m.Append(3, Vector{Idx: []uint32{2, 7, 9}, Val: []float32{5, 6, 7}})
	var dst CSR
	for _, perm := range [][]int32{{3, 0}, {2, 0, 1, 3}, {1}, {2, 1}} {
		want := m.Permute(perm)
		got := m.PermuteInto(&dst, perm)
		if got != &dst || !reflect.DeepEqual(*got, *want) {
			t.Fatalf("perm %v: %+v, want %+v", perm, *got, *want)
		}
	}
	if allocs := testing.AllocsPerRun(10, func() { m.PermuteInto(&dst, []int32{3, 2, 1, 0}) }); allocs != 0 {
		t.Errorf("PermuteInto into a large enough CSR allocates %v times", allocs)
	}
}

// Matrix.Prefetch must not fault for any index, on a matrix above its
// size threshold and below it, and must not allocate.
func TestMatrixPrefetchIsHarmless(t *testing.T) {
	big := NewMatrix(prefetchMinBytes/(16*4)+1, 10)
	small := NewMatrix(3, 10)
	x := Vector{Idx: []uint32{0, 2, 5, uint32(big.D - 1), uint32(big.D), 1 << 31, ^uint32(0)}, Val: make([]float32, 7)}
	for _, m := range []*Matrix{big, small, {}} {
		m.Prefetch(x)
		m.Prefetch(Vector{})
	}
	if a := testing.AllocsPerRun(100, func() { big.Prefetch(x) }); a != 0 {
		t.Fatalf("Prefetch allocates %v", a)
	}
}

// PrefetchElem is a hint: harmless at every index, in range or not, and on
// an empty slice; it does not allocate.
func TestPrefetchElemIsHarmless(t *testing.T) {
	type rec struct {
		a, b int64
		c    [3]int32
	}
	s := make([]rec, 5)
	for _, i := range []int{-1, 0, 4, 5, math.MaxInt} {
		PrefetchElem(s, i)
	}
	PrefetchElem([]rec(nil), 0)
	if a := testing.AllocsPerRun(100, func() { PrefetchElem(s, 3) }); a != 0 {
		t.Fatalf("PrefetchElem allocates %v", a)
	}
}

// PrefetchAt is a hint: harmless for every range, in or out of the
// nonzeros, in every packing, and on an empty Packed.
func TestPrefetchAtIsHarmless(t *testing.T) {
	var m CSR
	m.Append(1, Vector{Idx: []uint32{1, 70000}, Val: []float32{0.5, 2}})
	m.Append(-1, Vector{})
	m.Append(1, Vector{Idx: []uint32{3}, Val: []float32{4}})
	for _, mode := range []Packing{0, PackNarrow, PackCodes, PackCompact} {
		for _, p := range []*Packed{Pack(&m, nil, mode), Pack(&m, []int32{2}, mode), Pack(&CSR{}, nil, mode)} {
			for _, lo := range []int{-1, 0, 1, 2, 3, math.MaxInt} {
				for _, k := range []int{-1, 0, 1, 2, 3, 4} {
					p.PrefetchAt(lo, k)
				}
			}
		}
	}
}

// PrefetchIndexed accepts indices past its table and empty inputs, and does
// not allocate.
func TestPrefetchIndexed(t *testing.T) {
	table := make([]float64, 1<<18) // 2 MiB: past the size it skips
	idx := []uint32{0, 1<<18 - 1, 1 << 18, 1 << 31}
	if n := testing.AllocsPerRun(100, func() {
		PrefetchIndexed(table, idx)
		PrefetchIndexed(table[:100], idx)
		PrefetchIndexed(table, nil)
		PrefetchIndexed([]float64(nil), idx)
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
