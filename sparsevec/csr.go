package sparsevec

// CSR is a block of sparse rows in compressed sparse row form: row r has
// labels Labels[r] and nonzeros Idx[Ptr[r]:Ptr[r+1]], Val[Ptr[r]:Ptr[r+1]].
// The zero value is an empty block ready for Append.
//
// All rows live in three contiguous arrays, so a block of a million rows is
// three allocations, not a million.
//
// Qid holds the query id of every row (the qid:N of LIBSVM and svmlight
// ranking data), or is empty (nil or of length 0) when the rows have none:
// either len(Qid) == Rows() or len(Qid) == 0. Learners ignore it; readers
// and writers carry it. The methods below keep that rule: a row added
// without a query id to a block whose rows have them gets query id 0, and
// rows added with query ids to a block of rows without them give those
// rows query id 0.
type CSR struct {
	Labels []float32
	Ptr    []int // len(Labels)+1 once a row has been appended; Ptr[0] == 0
	Idx    []uint32
	Val    []float32
	Qid    []int64 // len(Labels) or 0
	// Dim is one more than the largest feature index stored (0 when empty):
	// a Matrix with D >= Dim can score every row.
	Dim int
}

// HasQid reports whether the rows carry query ids (len(Qid) > 0).
func (m *CSR) HasQid() bool { return len(m.Qid) > 0 }

// Rows returns the number of rows.
func (m *CSR) Rows() int { return len(m.Labels) }

// NNZ returns the number of stored nonzeros.
func (m *CSR) NNZ() int { return len(m.Idx) }

// Row returns row r. The vector aliases m's arrays: it stays valid until m is
// modified by Reset or Append. It panics if r is out of range.
func (m *CSR) Row(r int) Vector {
	p := m.Ptr[r : r+2 : r+2] // one bounds check for both ends
	lo, hi := p[0], p[1]
	return Vector{Idx: m.Idx[lo:hi:hi], Val: m.Val[lo:hi:hi]}
}

// Append copies x onto the end of m as a new row with the given label and
// no query id (query id 0 if the other rows of m have them). It does not
// check x; callers that take rows from outside validate them first (the
// reader does).
func (m *CSR) Append(label float32, x Vector) {
	if len(m.Qid) > 0 {
		m.Qid = append(m.Qid, 0)
	}
	m.appendRow(label, x)
}

// AppendQid is Append for a row with query id qid; rows of m that have no
// query id get 0.
func (m *CSR) AppendQid(label float32, qid int64, x Vector) {
	m.Qid = m.qidRoom()
	m.Qid = append(m.Qid, qid)
	m.appendRow(label, x)
}

// qidRoom returns m.Qid with a query id for every row of m: m.Qid itself,
// or zeros when the rows of m have none.
func (m *CSR) qidRoom() []int64 {
	if n := m.Rows(); len(m.Qid) < n {
		m.Qid = append(m.Qid[:0], make([]int64, n)...)
	}
	return m.Qid
}

func (m *CSR) appendRow(label float32, x Vector) {
	if len(m.Ptr) == 0 {
		m.Ptr = append(m.Ptr, 0)
	}
	m.Labels = append(m.Labels, label)
	m.Idx = append(m.Idx, x.Idx...)
	m.Val = append(m.Val, x.Val...)
	m.Ptr = append(m.Ptr, len(m.Idx))
	if d := int(x.MaxIndex()) + 1; len(x.Idx) > 0 && d > m.Dim {
		m.Dim = d
	}
}

// AppendCSR appends every row of o to m, with their query ids (see CSR).
func (m *CSR) AppendCSR(o *CSR) {
	if o.Rows() == 0 {
		return
	}
	if len(m.Ptr) == 0 {
		m.Ptr = append(m.Ptr, 0)
	}
	switch {
	case len(o.Qid) > 0:
		m.Qid = append(m.qidRoom(), o.Qid[:o.Rows()]...)
	case len(m.Qid) > 0:
		m.Qid = append(m.Qid, make([]int64, o.Rows())...)
	}
	base := len(m.Idx)
	m.Labels = append(m.Labels, o.Labels...)
	m.Idx = append(m.Idx, o.Idx...)
	m.Val = append(m.Val, o.Val...)
	for _, p := range o.Ptr[1:] {
		m.Ptr = append(m.Ptr, base+p)
	}
	if o.Dim > m.Dim {
		m.Dim = o.Dim
	}
}

// Reset empties m, keeping its capacity for reuse.
func (m *CSR) Reset() {
	m.Labels = m.Labels[:0]
	m.Idx = m.Idx[:0]
	m.Val = m.Val[:0]
	m.Ptr = m.Ptr[:0]
	m.Qid = m.Qid[:0]
	m.Dim = 0
}

// Permute returns a new CSR whose row i is row perm[i] of m. perm need not
// cover every row (a subset permutes and selects at once). The copy lays
// rows out in the order a learner will visit them, so an epoch reads memory
// sequentially. It panics if an entry of perm is out of range.
func (m *CSR) Permute(perm []int32) *CSR { return m.PermuteInto(nil, perm) }

// PermuteInto is Permute writing into dst (nil: a new CSR), whose arrays
// it reuses when they are large enough; it returns dst. Query ids go with
// their rows.
func (m *CSR) PermuteInto(dst *CSR, perm []int32) *CSR {
	nnz := 0
	for _, r := range perm {
		nnz += m.Ptr[r+1] - m.Ptr[r]
	}
	if dst == nil {
		dst = new(CSR)
	}
	dst.Labels = resize(dst.Labels, len(perm))
	dst.Ptr = resize(dst.Ptr, len(perm)+1)
	dst.Idx = resize(dst.Idx, nnz)
	dst.Val = resize(dst.Val, nnz)
	dst.Ptr[0], dst.Dim = 0, 0
	if len(m.Qid) > 0 {
		dst.Qid = resize(dst.Qid, len(perm))
		for i, r := range perm {
			dst.Qid[i] = m.Qid[r]
		}
	} else {
		dst.Qid = dst.Qid[:0]
	}
	off := 0
	for i, r := range perm {
		lo, hi := m.Ptr[r], m.Ptr[r+1]
		copy(dst.Idx[off:], m.Idx[lo:hi])
		copy(dst.Val[off:], m.Val[lo:hi])
		off += hi - lo
		dst.Ptr[i+1] = off
		dst.Labels[i] = m.Labels[r]
		if hi > lo && int(m.Idx[hi-1])+1 > dst.Dim {
			dst.Dim = int(m.Idx[hi-1]) + 1
		}
	}
	return dst
}

// resize returns s with length n, reusing its array when it is large
// enough (never nil, as make gives).
func resize[T any](s []T, n int) []T {
	if s != nil && cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
