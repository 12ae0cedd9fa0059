package sparsevec

// Start returns the position of row r's first nonzero among p's
// nonzeros: with RowNNZ, where RowAt, CodedAt and PrefetchAt find the row
// without reading the row offsets. It panics if r is out of range.
func (p *Packed) Start(r int) int { return p.ptr[r] }

// RowNNZ returns the number of nonzeros of row r without reading them. It
// panics if r is out of range.
func (p *Packed) RowNNZ(r int) int { return p.ptr[r+1] - p.ptr[r] }

// NonzeroBytes returns the bytes one nonzero takes in p: its index (2 or
// 4) and its value (1 for a code, else 4).
func (p *Packed) NonzeroBytes() int {
	n := 2
	if p.wide {
		n = 4
	}
	if p.dict != nil {
		return n + 1
	}
	return n + 4
}

// RowBytes is the bytes Bytes counts per row besides its nonzeros: the
// label and the row offset.
const RowBytes = 4 + 8
