package kperceptron

import (
	"math"

	"github.com/polyhedral/cpm/kperceptron/internal/kvec"
	"github.com/polyhedral/cpm/sparsevec"
)

// rowDots computes the inner products of one sparse row y with every row
// x_r of a fixed CSR matrix, as a kernel row or a prediction needs them,
// by a sweep over a column-major copy of the matrix:
//
//	dst[r] = +0;   for each nonzero (j, y_j) of y, j ascending:
//	                   for each row r with a nonzero x_rj:  dst[r] += x_rj·y_j
//
// Each dst[r] is thus the sum of the products at the indices shared by
// x_r and y, added in ascending index order to +0: the same float64
// operations as the merge sparsevec.Dot(x_r, y), so the same value bit for
// bit. The work is the number of shared nonzeros, where a merge walks all
// the nonzeros of both rows.
//
// A column with nonzeros in at least half of the rows is stored dense
// (+0 for the absent entries) and swept by kvec.AddScaledCols, the dense
// columns of y's indices that no sparse column separates in one pass
// (each dst[r] still gets its products in ascending index order): an absent
// entry then adds (+0)·y_j = ±0 to a sum that is never −0 (it starts at +0,
// and x + y is −0 only if both are), which leaves it unchanged as long as
// y_j is finite; a y with a non-finite value (possible in prediction
// only: training rows are checked) is merged row by row instead. The
// other columns are stored as (row, value) lists. A matrix whose largest
// index is large compared with its number of nonzeros (above 2^16 and
// above twice the nonzeros) gets no copy and is always merged. The copy
// takes 8 bytes per sparse entry and 4 bytes per row of each dense
// column, at most 8 bytes per nonzero of the matrix.
type rowDots struct {
	m      *sparsevec.CSR
	colPtr []int     // the sparse entries of column j are colPtr[j] to colPtr[j+1]; nil: merge
	rowOf  []int32   // row of each sparse entry, ascending within a column
	val    []float32 // value of each sparse entry
	full   []int     // per column: offset of its dense copy in dense, or -1
	dense  []float32 // the dense columns, Rows() values each
	// Scratch of dots for a run of y's indices at dense columns with no
	// sparse column between them, swept together (kvec.AddScaledCols):
	// their offsets in dense and y's values there. Capacity: the dense
	// columns.
	runOff []int
	runA   []float64
}

// rowDotsMaxDim is the number of columns up to which a column-major copy
// is always made; above it only if the matrix has at least half as many
// nonzeros.
const rowDotsMaxDim = 1 << 16

// newRowDots returns a rowDots over m, whose rows must be strictly
// ascending (checkKernelRows), with its arrays in mem (nil: new memory;
// see trainMemory). A matrix of more than 2^31−1 rows is merged.
func newRowDots(m *sparsevec.CSR, mem *trainMemory) rowDots {
	if mem == nil {
		mem = new(trainMemory)
	}
	n := m.Rows()
	lo, hi := m.Ptr[0], m.Ptr[n]
	dim := 0
	for _, j := range m.Idx[lo:hi] {
		dim = max(dim, int(j)+1)
	}
	d := rowDots{m: m}
	if nnz := hi - lo; dim > max(rowDotsMaxDim, 2*nnz) || n > math.MaxInt32 {
		return d
	}
	count := grow(&mem.count, dim)
	clear(count)
	for _, j := range m.Idx[lo:hi] {
		count[j]++
	}
	d.colPtr = grow(&mem.colPtr, dim+1)
	d.colPtr[0] = 0
	d.full = grow(&mem.full, dim)
	ndense := 0
	for j, c := range count {
		d.full[j] = -1
		if c > 0 && 2*c >= n {
			d.full[j] = ndense * n
			ndense++
			c = 0
		}
		d.colPtr[j+1] = d.colPtr[j] + c
	}
	d.dense = grow(&mem.dense, ndense*n)
	clear(d.dense) // +0 where a row lacks the feature
	d.runOff, d.runA = grow(&mem.runOff, ndense)[:0], grow(&mem.runA, ndense)[:0]
	d.rowOf = grow(&mem.rowOf, d.colPtr[dim])
	d.val = grow(&mem.val, d.colPtr[dim])
	next := count // reused: the next free sparse entry of each column
	copy(next, d.colPtr[:dim])
	for r := range n {
		a, b := m.Ptr[r], m.Ptr[r+1]
		for i, j := range m.Idx[a:b] {
			if o := d.full[j]; o >= 0 {
				d.dense[o+r] = m.Val[a+i]
				continue
			}
			p := next[j]
			next[j]++
			d.rowOf[p] = int32(r)
			d.val[p] = m.Val[a+i]
		}
	}
	return d
}

// dots sets dst[r] = x_r·y in float64 for every row x_r of the matrix
// (len(dst) = its rows). y's indices must be strictly ascending; indices
// beyond the matrix's meet only zeros and are skipped. It does not
// allocate.
func (d *rowDots) dots(dst []float64, y sparsevec.Vector) {
	if d.colPtr == nil || (len(d.dense) > 0 && !y.IsFinite()) {
		for r := range dst {
			dst[r] = sparsevec.Dot(d.m.Row(r), y)
		}
		return
	}
	dim := len(d.full)
	yv := y.Val[:len(y.Idx)]
	// The pending run of dense columns, in local slice headers over the
	// scratch (appends within its capacity write no pointer to the heap).
	offs, as := d.runOff[:0], d.runA[:0]
	fresh := true // nothing added yet: dst's values are not read
	for i, j := range y.Idx {
		if int64(j) >= int64(dim) {
			continue
		}
		v := float64(yv[i])
		if o := d.full[j]; o >= 0 {
			offs, as = append(offs, o), append(as, v)
			continue
		}
		d.sweep(dst, offs, as, fresh)
		offs, as, fresh = offs[:0], as[:0], false
		a, b := d.colPtr[j], d.colPtr[j+1]
		rows, vals := d.rowOf[a:b], d.val[a:b]
		vals = vals[:len(rows)]
		for k, r := range rows {
			// The conversion rounds the product: no fused multiply-add.
			dst[r] += float64(float64(vals[k]) * v)
		}
	}
	d.sweep(dst, offs, as, fresh)
}

// sweep adds the dense columns at offs, scaled by as, into dst, each
// value's products in column order; if fresh, dst starts from +0 (with no
// columns, it is cleared).
func (d *rowDots) sweep(dst []float64, offs []int, as []float64, fresh bool) {
	switch {
	case fresh:
		kvec.SetScaledCols(dst, d.dense, offs, as)
	case len(offs) == 1:
		o := offs[0]
		kvec.AddScaled(dst, d.dense[o:o+len(dst)], as[0])
	case len(offs) > 1:
		kvec.AddScaledCols(dst, d.dense, offs, as)
	}
}
