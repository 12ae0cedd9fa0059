package csrconv

import (
	"fmt"
	"math"
	"sort"

	"github.com/james-bowman/sparse"

	"github.com/polyhedral/cpm/sparsevec"
)

// MaxCols is the largest column count that converts: column j becomes the
// uint32 feature index j+1.
const MaxCols = math.MaxUint32

// Options controls FromSparse. The zero value refuses every value that
// float32 cannot hold exactly.
type Options struct {
	// Round rounds each value to the nearest float32 (ties to even)
	// instead of refusing inexact values with ErrInexact. Finite values
	// beyond the float32 range are refused with ErrNonFinite either way.
	Round bool
}

// FromSparse converts m, with labels[i] the label of row i, into a
// sparsevec.CSR: element (i, j) of m becomes feature index j+1 of row i (see
// the package documentation). Within a row the indices come out ascending
// whatever their order in m; explicitly stored zeros are kept.
//
// The result shares m's row pointers and labels (capacity clipped) and
// holds its own indices and values. It returns an error wrapping
// ErrLabels, ErrTooWide or ErrMalformed for a matrix that does not
// convert, and a *ValueError wrapping ErrNonFinite or ErrInexact for the
// first element or label that does not.
func FromSparse(m *sparse.CSR, labels []float32, opt Options) (*sparsevec.CSR, error) {
	raw := m.RawMatrix()
	rows, cols := raw.I, raw.J
	if len(labels) != rows {
		return nil, fmt.Errorf("csrconv: %w: %d labels for %d rows", ErrLabels, len(labels), rows)
	}
	if uint64(cols) > MaxCols {
		return nil, fmt.Errorf("csrconv: %w: %d columns, at most %d convert", ErrTooWide, cols, uint64(MaxCols))
	}
	nnz, err := checkPtr(raw.Indptr, rows, len(raw.Ind), len(raw.Data))
	if err != nil {
		return nil, err
	}
	for i, l := range labels {
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			return nil, &ValueError{Row: i, Col: -1, Value: float64(l), Err: ErrNonFinite}
		}
	}
	out := &sparsevec.CSR{Labels: labels[:rows:rows], Idx: make([]uint32, nnz), Val: make([]float32, nnz)}
	if rows == 0 {
		return out, nil
	}
	out.Ptr = raw.Indptr[: rows+1 : rows+1]
	for r := range rows {
		lo, hi := out.Ptr[r], out.Ptr[r+1]
		if err := convertRow(out.Idx[lo:hi], out.Val[lo:hi], raw.Ind[lo:hi], raw.Data[lo:hi], r, cols, opt.Round); err != nil {
			return nil, err
		}
		if hi > lo {
			out.Dim = max(out.Dim, int(out.Idx[hi-1])+1)
		}
	}
	return out, nil
}

// checkPtr checks that ptr holds the rows+1 row pointers of a CSR, starting
// at 0 and never decreasing, over at most nIdx indices and nVal values,
// and returns the number of nonzeros, ptr[rows]. Zero rows may have no
// pointers.
func checkPtr(ptr []int, rows, nIdx, nVal int) (int, error) {
	if rows == 0 && len(ptr) == 0 {
		return 0, nil
	}
	if len(ptr) != rows+1 || ptr[0] != 0 {
		return 0, fmt.Errorf("csrconv: %w: %d row pointers for %d rows, want %d starting at 0", ErrMalformed, len(ptr), rows, rows+1)
	}
	for r := range rows {
		if ptr[r+1] < ptr[r] {
			return 0, fmt.Errorf("csrconv: %w: row pointer %d = %d below row pointer %d = %d", ErrMalformed, r+1, ptr[r+1], r, ptr[r])
		}
	}
	if nnz := ptr[rows]; nnz > nIdx || nnz > nVal {
		return 0, fmt.Errorf("csrconv: %w: %d nonzeros, only %d indices and %d values", ErrMalformed, nnz, nIdx, nVal)
	}
	return ptr[rows], nil
}

// convertRow converts row r's 0-based columns ind and values data into
// idx and val, sorting them by index when they are not ascending.
func convertRow(idx []uint32, val []float32, ind []int, data []float64, r, cols int, round bool) error {
	ind, data = ind[:len(idx)], data[:len(idx)]
	sorted := true
	for i, j := range ind {
		if uint(j) >= uint(cols) {
			return fmt.Errorf("csrconv: %w: row %d: column %d outside [0, %d)", ErrMalformed, r, j, cols)
		}
		f, err := toFloat32(data[i], round)
		if err != nil {
			return &ValueError{Row: r, Col: j, Value: data[i], Err: err}
		}
		idx[i], val[i] = uint32(j)+1, f
		if i > 0 && idx[i] <= idx[i-1] {
			sorted = false
		}
	}
	if sorted {
		return nil
	}
	sort.Sort(byIndex{idx, val})
	for i := 1; i < len(idx); i++ {
		if idx[i] == idx[i-1] {
			return fmt.Errorf("csrconv: %w: row %d: column %d stored twice", ErrMalformed, r, idx[i]-1)
		}
	}
	return nil
}

// toFloat32 returns v as a float32: exactly, or rounded to nearest with
// round. NaN, ±Inf and values beyond the float32 range fail with
// ErrNonFinite; without round, inexact values fail with ErrInexact.
func toFloat32(v float64, round bool) (float32, error) {
	f := float32(v)
	switch {
	case math.IsNaN(v) || math.IsInf(float64(f), 0):
		return 0, ErrNonFinite
	case !round && float64(f) != v:
		return 0, ErrInexact
	}
	return f, nil
}

// byIndex sorts a row's indices and values together by index.
type byIndex struct {
	idx []uint32
	val []float32
}

func (s byIndex) Len() int           { return len(s.idx) }
func (s byIndex) Less(a, b int) bool { return s.idx[a] < s.idx[b] }
func (s byIndex) Swap(a, b int) {
	s.idx[a], s.idx[b] = s.idx[b], s.idx[a]
	s.val[a], s.val[b] = s.val[b], s.val[a]
}

// ToSparse converts c into an r×cols *sparse.CSR, r = c.Rows(): feature
// index j of row i becomes element (i, j−1) (see the package
// documentation). Values are widened to float64, which is exact. cols 0
// means c.Dim−1 columns (0 for an empty c), the least that holds every
// index up to c.Dim−1; the labels stay in c.Labels.
//
// The result shares c's row pointers (capacity clipped) and holds its own
// column indices and values. It returns an error wrapping ErrTooWide for an
// index beyond cols, and ErrMalformed for feature index 0 or row pointers
// that do not fit c. It panics if cols is negative.
func ToSparse(c *sparsevec.CSR, cols int) (*sparse.CSR, error) {
	if cols < 0 {
		panic("csrconv: ToSparse with negative cols")
	}
	if cols == 0 {
		cols = max(c.Dim-1, 0)
	}
	rows := c.Rows()
	nnz, err := checkPtr(c.Ptr, rows, len(c.Idx), len(c.Val))
	if err != nil {
		return nil, err
	}
	ind, data := make([]int, nnz), make([]float64, nnz)
	val := c.Val[:nnz]
	for k, j := range c.Idx[:nnz] {
		switch {
		case j == 0:
			return nil, fmt.Errorf("csrconv: %w: feature index 0 at nonzero %d (indices are 1-based)", ErrMalformed, k)
		case uint64(j) > uint64(cols):
			return nil, fmt.Errorf("csrconv: %w: feature index %d at nonzero %d, only %d columns", ErrTooWide, j, k, cols)
		}
		ind[k], data[k] = int(j)-1, float64(val[k])
	}
	ptr := []int{0}
	if rows > 0 {
		ptr = c.Ptr[: rows+1 : rows+1]
	}
	return sparse.NewCSR(rows, cols, ptr, ind, data), nil
}
