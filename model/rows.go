package model

import (
	"math"
	"slices"

	"github.com/polyhedral/cpm/sparsevec"
)

// A compact model (Rows set) holds, in each weight matrix, only the
// feature rows listed in Rows: row i of every matrix is the weights of
// feature Rows[i], and every feature not listed has weight 0 for every
// face of every matrix. Its size follows the features that carry weight,
// not the largest feature index: two rows with feature index 10^7 train a
// model of a few rows, not of 10^7.

// Dense returns m with every weight matrix holding all D feature rows: m
// itself when Rows is nil, else a shallow copy of m (sharing every other
// field) whose Weights are new D×K matrices, zero in the rows Rows does
// not list, and whose Rows is nil. Warm starts and every consumer that
// indexes Weights by feature use it.
func (m *Model) Dense() *Model {
	if m.Rows == nil {
		return m
	}
	out := *m
	out.Rows = nil
	out.Weights = make([]*sparsevec.Matrix, len(m.Weights))
	for i, w := range m.Weights {
		d := sparsevec.NewMatrix(m.D, m.K)
		for r, j := range m.Rows {
			copy(d.Data[int(j)*d.Stride:int(j)*d.Stride+m.K], w.Data[r*w.Stride:r*w.Stride+m.K])
		}
		out.Weights[i] = d
	}
	return &out
}

// Compact returns m with its weight matrices holding only the rows the
// file format stores: the bias row 0 and every feature row with a weight
// that is not +0 (bit pattern 0) in some matrix. It returns m itself when
// m already holds exactly those rows, so a dense model none of whose rows
// is all +0 stays dense; otherwise a shallow copy of m with Rows set and
// new compact matrices. m must be valid.
func (m *Model) Compact() *Model {
	keep := m.storedRows()
	if len(keep) == m.rowCount() {
		return m
	}
	out := *m
	out.Rows = make([]uint32, len(keep))
	for i, r := range keep {
		out.Rows[i] = m.feature(int(r))
	}
	out.Weights = make([]*sparsevec.Matrix, len(m.Weights))
	for i, w := range m.Weights {
		c := newCompactMatrix(len(keep), m.K)
		for i, r := range keep {
			copy(c.Data[i*c.Stride:i*c.Stride+m.K], w.Data[int(r)*w.Stride:int(r)*w.Stride+m.K])
		}
		out.Weights[i] = c
	}
	return &out
}

// RowOf returns the row of m's weight matrices that holds feature j, and
// false when none does (j >= D, or a compact model does not store j: its
// weight is 0 in every matrix). For many lookups, RowMap is faster.
func (m *Model) RowOf(j uint32) (int, bool) {
	if m.Rows == nil {
		return int(j), int64(j) < int64(m.D)
	}
	return slices.BinarySearch(m.Rows, j)
}

// Feature returns the feature index of row r of m's weight matrices: r
// for a dense model, Rows[r] for a compact one.
func (m *Model) Feature(r int) uint32 { return m.feature(r) }

// feature returns the feature index of row r of m's weight matrices.
func (m *Model) feature(r int) uint32 {
	if m.Rows != nil {
		return m.Rows[r]
	}
	return uint32(r)
}

// storedRows returns, ascending, the rows of m's weight matrices (as m
// holds them: feature indices for a dense model, positions in Rows for a
// compact one) that the file format stores: row 0 and every row with a
// weight that is not +0 in some matrix.
func (m *Model) storedRows() []uint32 {
	n := m.rowCount()
	keep := make([]uint32, 0, min(n, 1<<16))
	for r := range n {
		if r == 0 || m.rowNonzero(r) {
			keep = append(keep, uint32(r))
		}
	}
	return keep
}

// rowNonzero reports whether row r has a weight that is not +0 in some
// matrix.
func (m *Model) rowNonzero(r int) bool {
	for _, w := range m.Weights {
		for _, v := range w.Data[r*w.Stride : r*w.Stride+w.K] {
			if math.Float32bits(v) != 0 {
				return true
			}
		}
	}
	return false
}

// tableFactor bounds the lookup table of a RowMap: a dense table of the
// features up to the last stored one is used when its int32 entries take
// at most tableFactor times the memory of the compact weights.
const tableFactor = 16

// RowMap maps the feature indices of raw rows to the rows of a compact
// model's scoring matrices (ScoringWeights): a stored feature to its row,
// any other feature below D to the zero row, which follows the stored
// rows and is all 0, and a feature at or beyond D to nothing. It is
// read-only once built and may be shared by goroutines.
type RowMap struct {
	rows []uint32
	d    int64
	// table maps a feature below len(table) to its scoring row: its row
	// when stored, the zero row len(rows) when not; nil when a table would
	// take more than tableFactor times the compact weights' memory, and
	// then rows are found by binary search in rows.
	table []uint32
}

// RowMap returns the map of m's stored rows; nil when m is dense (Rows
// nil). m must be valid.
func (m *Model) RowMap() *RowMap {
	if m.Rows == nil {
		return nil
	}
	return newRowMap(m.Rows, m.D, tableFactor*m.MemoryBytes())
}

// newRowMap returns the map of rows of a model over d features, with a
// lookup table if it takes at most tableBytes bytes.
func newRowMap(rows []uint32, d int, tableBytes int64) *RowMap {
	r := &RowMap{rows: rows, d: int64(d)}
	if size := int64(rows[len(rows)-1]) + 1; size*4 <= tableBytes {
		r.table = make([]uint32, size)
		zero := uint32(len(rows))
		for j := range r.table {
			r.table[j] = zero
		}
		for i, j := range rows {
			r.table[j] = uint32(i)
		}
	}
	return r
}

// Zero returns the zero row: len(Rows), one past the stored rows.
func (r *RowMap) Zero() int { return len(r.rows) }

// Row returns the row of feature j and whether j is stored.
func (r *RowMap) Row(j uint32) (int, bool) {
	if r.table != nil {
		if int64(j) < int64(len(r.table)) {
			i := int(r.table[j])
			return i, i != len(r.rows)
		}
		return 0, false
	}
	return slices.BinarySearch(r.rows, j)
}

// AppendRow appends to idx and val the entries of x with each index
// replaced by its row (the zero row for a feature below D that is not
// stored), leaving out the features at or beyond D, and returns them. A
// dense model's predictor scores the entries of x below D (x.Below(D)), in
// order; the scoring matrices see the same entries in the same order, with
// the same weights (a feature that is not stored has weight +0 in every
// matrix, as the zero row has), so every score comes out bit for bit the
// same. The indices are not ascending when x has features that are not
// stored; the sparsevec kernels accept that. It allocates only when idx or
// val must grow.
func (r *RowMap) AppendRow(idx []uint32, val []float32, x sparsevec.Vector) ([]uint32, []float32) {
	xi := x.Idx
	xv := x.Val[:len(xi)]
	n := len(idx)
	idx, val = slices.Grow(idx, len(xi)), slices.Grow(val, len(xi))
	oi, ov := idx[n:n+len(xi)], val[n:n+len(xi)]
	zero := uint32(len(r.rows))
	m := 0
	if t := r.table; t != nil {
		for i, j := range xi {
			if int64(j) >= r.d {
				continue
			}
			p := zero
			if int(j) < len(t) {
				p = t[j]
			}
			oi[m], ov[m] = p, xv[i]
			m++
		}
	} else {
		for i, j := range xi {
			if int64(j) >= r.d {
				continue
			}
			p, ok := slices.BinarySearch(r.rows, j)
			if !ok {
				p = int(zero)
			}
			oi[m], ov[m] = uint32(p), xv[i]
			m++
		}
	}
	return idx[:n+m], val[:n+m]
}

// ScoringWeights returns the weight matrices a predictor scores the rows
// of RowMap.AppendRow with: m.Weights for a dense model; for a compact one,
// each matrix with the zero row appended (len(Rows)+1 rows), sharing its
// data when the matrix has room for that row, as the matrices of Read and
// Compact have, and copying it otherwise.
func (m *Model) ScoringWeights() []*sparsevec.Matrix {
	if m.Rows == nil {
		return m.Weights
	}
	out := make([]*sparsevec.Matrix, len(m.Weights))
	for i, w := range m.Weights {
		n := (w.D + 1) * w.Stride
		data := w.Data[:len(w.Data):cap(w.Data)]
		if cap(data) >= n && allZero(data[len(data):n]) {
			data = data[:n]
		} else {
			data = append(slices.Clip(data), make([]float32, w.Stride)...)
		}
		out[i] = &sparsevec.Matrix{D: w.D + 1, K: w.K, Stride: w.Stride, Data: data}
	}
	return out
}

func allZero(s []float32) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

// newCompactMatrix returns a zero rows×k matrix with room for the zero
// row of ScoringWeights after its data.
func newCompactMatrix(rows, k int) *sparsevec.Matrix {
	w := sparsevec.NewMatrix(rows+1, k)
	w.D, w.Data = rows, w.Data[:rows*w.Stride]
	return w
}
