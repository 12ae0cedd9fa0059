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

// CodedInto is CodedAt into *x: it sets x to the row of nonzeros lo:lo+n
// in its stored encoding and returns true when p stores 2-byte indices and
// value codes, and leaves x alone and returns false otherwise. Setting the
// fields in place spares a caller that keeps the row in memory (to pass it
// by pointer) the copy of a CodedRow built on the stack. It panics if
// lo:lo+n is out of range.
func (p *Packed) CodedInto(x *CodedRow, lo, n int) bool {
	if p.wide || p.dict == nil {
		return false
	}
	hi := lo + n
	x.Idx = p.idx16[lo:hi:hi]
	x.Codes = p.codes[lo:hi:hi]
	x.Dict = p.dict
	return true
}
