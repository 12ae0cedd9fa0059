package sparsevec

// CodedRow is a sparse row stored compactly, as Packed keeps rows under
// PackCompact: nonzero i has feature index Idx[i] (ascending, as in a
// Vector) and value Dict[Codes[i]]. The Matrix methods ScoresArgmaxCoded,
// AddToFaceCoded and AddOuterCoded read it without decoding it into a
// Vector and give bit for bit the results of ScoresArgmax, AddToFace and
// AddOuter on the decoded row.
type CodedRow struct {
	Idx   []uint16
	Codes []uint8 // len(Codes) >= len(Idx)
	Dict  *[256]float32
}

// Decode returns the row as a Vector in idx and val (grown when shorter
// than the row; the result aliases them).
func (x CodedRow) Decode(idx []uint32, val []float32) Vector {
	n := len(x.Idx)
	if cap(idx) < n || cap(val) < n {
		idx, val = make([]uint32, n), make([]float32, n)
	}
	v := Vector{Idx: idx[:n], Val: val[:n]}
	widen(v.Idx, x.Idx)
	decode(v.Val, x.Codes[:n], x.Dict)
	return v
}

// CodedDirect reports whether the Coded Matrix methods read the compact
// rows directly (AVX2+FMA kernels); otherwise they decode each row into a
// buffer first, and a caller that keeps its own buffer may as well decode
// with Packed.Row and use the Vector methods.
func CodedDirect() bool { return codedDirect() }

// CodedRow returns row r in its stored encoding when p stores 2-byte
// indices and value codes (ok false otherwise). It panics if r is out of
// range.
func (p *Packed) CodedRow(r int) (x CodedRow, ok bool) {
	q := p.ptr[r : r+2 : r+2]
	return p.CodedAt(q[0], q[1]-q[0])
}

// CodedAt is CodedRow of the row whose nonzeros are lo:lo+n (Start and
// RowNNZ), without reading the row offsets. It panics if lo:lo+n is out
// of range.
func (p *Packed) CodedAt(lo, n int) (x CodedRow, ok bool) {
	hi := lo + n
	if p.wide || p.dict == nil {
		return CodedRow{}, false
	}
	return CodedRow{Idx: p.idx16[lo:hi:hi], Codes: p.codes[lo:hi:hi], Dict: p.dict}, true
}

// checkCoded is checkVec for a CodedRow.
func (m *Matrix) checkCoded(x *CodedRow) []float32 {
	if len(x.Codes) < len(x.Idx) {
		panic("sparsevec: coded row has fewer codes than indices")
	}
	if x.Dict == nil && len(x.Idx) > 0 {
		panic("sparsevec: coded row without a dictionary")
	}
	return checkLast(m, x.Idx)
}

// ScoresArgmaxCoded is ScoresArgmax on the row x.
func (m *Matrix) ScoresArgmaxCoded(dst []float32, x *CodedRow, s, b float32) int {
	m.checkArgmax(dst)
	w := m.checkCoded(x)
	return scoresArgmaxCoded(dst[:m.Stride], w, m.K, x, s, b)
}

// AddToFaceCoded is AddToFace on the row x.
func (m *Matrix) AddToFaceCoded(k int, a float32, x *CodedRow) {
	if uint(k) >= uint(m.K) {
		panic("sparsevec: face index out of range")
	}
	w := m.checkCoded(x)
	codes := x.Codes[:len(x.Idx)]
	stride := m.Stride
	dict := x.Dict
	for i, j := range x.Idx {
		w[int(j)*stride+k] += a * dict[codes[i]]
	}
}

// AddOuterCoded is AddOuter on the row x.
func (m *Matrix) AddOuterCoded(c []float32, x *CodedRow) {
	if len(c) < m.Stride {
		panic("sparsevec: AddOuter coefficient vector shorter than Stride")
	}
	w := m.checkCoded(x)
	addOuterCoded(w, c[:m.Stride], m.K, x)
}

// decodeStack is the longest row the decoding fallbacks decode into
// arrays on the stack; longer rows are decoded into a new buffer.
const decodeStack = 1024

// scoresArgmaxDecoded is scoresArgmaxCoded by decoding x and calling
// scoresArgmax.
func scoresArgmaxDecoded(dst, w []float32, k int, x *CodedRow, s, b float32) int {
	var ib [decodeStack]uint32
	var vb [decodeStack]float32
	v := x.Decode(ib[:], vb[:])
	return scoresArgmax(dst, w, k, v.Idx, v.Val, s, b)
}

// addOuterDecoded is addOuterCoded by decoding x and calling addOuter.
func addOuterDecoded(w, c []float32, k int, x *CodedRow) {
	var ib [decodeStack]uint32
	var vb [decodeStack]float32
	v := x.Decode(ib[:], vb[:])
	addOuter(w, c, k, v.Idx, v.Val)
}
