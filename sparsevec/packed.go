package sparsevec

import (
	"math"
	"unsafe"
)

// Packed is a read-only block of sparse rows for a learner that keeps a
// whole training set in memory and reads it row by row (the CPM's
// in-memory training, package sgd), stored in as few bytes per nonzero as
// its Packing allows. Row r has label Label(r) and nonzeros
// ptr[r]:ptr[r+1] of two arrays:
//
//   - indices: idx16 (uint16, 2 bytes) under PackNarrow when every index
//     is below 1<<16, else idx32 (uint32, 4 bytes);
//   - values: codes (uint8, 1 byte), each the position of the value in
//     dict, under PackCodes when the rows' values take at most 256
//     distinct float32 bit patterns, else val (float32, 4 bytes).
//
// Exactly one array of each pair is in use. Under PackCompact, MNIST (784
// features, the 256 grey levels k/255) takes 3 bytes per nonzero instead
// of the CSR's 8. Values are kept by their bit patterns, so Row gives back
// bit for bit the row that was packed (-0 and +0 stay apart) and a learner
// reading Packed rows takes the same steps as on the CSR.
//
// Row decodes a compact row into a caller's buffer (a few kilobytes that
// stay in the L1 cache while the kernels Matrix.Scores, AddToFace and
// AddOuter read them); a row of 4-byte indices and values is returned
// without a copy, as CSR.Row returns it. Decoding costs time per row
// (about 0.1 ns per index and 0.3 ns per code on the machines measured).
// A row of 2-byte indices and codes is also available undecoded
// (CodedRow), for the Matrix methods that read it in place
// (ScoresArgmaxCoded, AddToFaceCoded, AddOuterCoded).
type Packed struct {
	labels []float32
	ptr    []int // len(labels)+1; ptr[0] == 0
	idx16  []uint16
	idx32  []uint32
	codes  []uint8
	val    []float32
	wide   bool          // idx32 in use (else idx16)
	dict   *[256]float32 // non-nil when codes are in use (else val)
	ncodes int           // codes in use: dict[:ncodes]
	dim    int           // one more than the largest index (0 when empty)
	maxRow int           // nonzeros of the longest row
}

// Rows returns the number of rows.
func (p *Packed) Rows() int { return len(p.labels) }

// NNZ returns the number of stored nonzeros.
func (p *Packed) NNZ() int {
	if len(p.ptr) == 0 {
		return 0
	}
	return p.ptr[len(p.ptr)-1]
}

// Dim returns one more than the largest feature index (0 when empty), as
// CSR.Dim.
func (p *Packed) Dim() int { return p.dim }

// MaxRow returns the number of nonzeros of the longest row: a buffer of
// that length holds every row (see Row).
func (p *Packed) MaxRow() int { return p.maxRow }

// Label returns the label of row r. It panics if r is out of range.
func (p *Packed) Label(r int) float32 { return p.labels[r] }

// Labels returns the labels of the rows, in row order; the slice aliases p
// and must not be modified.
func (p *Packed) Labels() []float32 { return p.labels }

// Wide reports whether the indices take 4 bytes each (no PackNarrow, or
// some index is at least 1<<16).
func (p *Packed) Wide() bool { return p.wide }

// Coded reports whether the values take 1 byte each: a code into a
// dictionary of at most 256 values.
func (p *Packed) Coded() bool { return p.dict != nil }

// Bytes returns the bytes of p's arrays in use: labels, offsets, indices,
// values and the dictionary.
func (p *Packed) Bytes() int64 {
	n := 4*int64(len(p.labels)) + 8*int64(len(p.ptr)) + 2*int64(len(p.idx16)) + 4*int64(len(p.idx32)) +
		int64(len(p.codes)) + 4*int64(len(p.val))
	if p.dict != nil {
		n += 4 * 256
	}
	return n
}

// Row returns row r, decoded into buf when its indices or values are
// compact: buf's arrays are grown to MaxRow when they are shorter than
// the row (so that later rows decode without allocating) and the returned
// vector aliases them, valid until the next decode into buf. A row stored
// in 4-byte indices and values aliases p instead. It panics if r is out
// of range.
func (p *Packed) Row(r int, buf *Vector) Vector {
	q := p.ptr[r : r+2 : r+2]
	return p.RowAt(q[0], q[1]-q[0], buf)
}

// RowAt is Row of the row whose nonzeros are lo:lo+n (Start and RowNNZ),
// without reading the row offsets. It panics if lo:lo+n is out of range.
func (p *Packed) RowAt(lo, n int, buf *Vector) Vector {
	hi := lo + n
	if p.wide && p.dict == nil {
		return Vector{Idx: p.idx32[lo:hi:hi], Val: p.val[lo:hi:hi]}
	}
	if cap(buf.Idx) < n || cap(buf.Val) < n {
		buf.Idx, buf.Val = make([]uint32, p.maxRow), make([]float32, p.maxRow)
	}
	var x Vector
	if p.wide {
		x.Idx = p.idx32[lo:hi:hi]
	} else {
		x.Idx = buf.Idx[:n]
		widen(x.Idx, p.idx16[lo:hi])
	}
	if p.dict == nil {
		x.Val = p.val[lo:hi:hi]
	} else {
		x.Val = buf.Val[:n]
		decode(x.Val, p.codes[lo:hi], p.dict)
	}
	return x
}

// widenGo sets dst[i] = src[i]; it panics if len(dst) < len(src).
func widenGo(dst []uint32, src []uint16) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = uint32(v)
	}
}

// decodeGo sets dst[i] = dict[codes[i]]; it panics if len(dst) <
// len(codes).
func decodeGo(dst []float32, codes []uint8, dict *[256]float32) {
	dst = dst[:len(codes)]
	for i, c := range codes {
		dst[i] = dict[c]
	}
}

// PrefetchRow asks the CPU to start loading row r's offsets, indices and
// values, as CSR.PrefetchRow does; a hint with no visible effect, a no-op
// when r is out of range.
func (p *Packed) PrefetchRow(r int) {
	if r < 0 || r+1 >= len(p.ptr) {
		return
	}
	p.PrefetchAt(p.ptr[r], p.ptr[r+1]-p.ptr[r])
}

// PrefetchAt is PrefetchRow of the row whose nonzeros are lo:lo+k (Start
// and RowNNZ), without reading the row offsets (nor the last, NNZ: the
// range is checked against the index array's length); a no-op when they
// are not in range.
func (p *Packed) PrefetchAt(lo, k int) {
	nnz := len(p.idx16)
	if p.wide {
		nnz = len(p.idx32)
	}
	if k <= 0 || lo < 0 || k > nnz-lo {
		return
	}
	n := uintptr(k)
	if !p.wide {
		prefetchRange(unsafe.Pointer(&p.idx16[lo]), 2*n)
	} else {
		prefetchRange(unsafe.Pointer(&p.idx32[lo]), 4*n)
	}
	if p.dict != nil {
		prefetchRange(unsafe.Pointer(&p.codes[lo]), n)
	} else {
		prefetchRange(unsafe.Pointer(&p.val[lo]), 4*n)
	}
}

// PrefetchPtr hints that row r's offsets and label will be read soon (the
// first hop of PrefetchRow for a row two steps ahead), as CSR.PrefetchPtr.
func (p *Packed) PrefetchPtr(r int) {
	if r < 0 || r+1 >= len(p.ptr) {
		return
	}
	prefetchRange(unsafe.Pointer(&p.ptr[r]), 16)
	prefetchRange(unsafe.Pointer(&p.labels[r]), 4)
}

// Packing is the set of compact encodings Pack may use; see Packed.
type Packing uint8

const (
	// PackNarrow stores indices in 2 bytes when every index is below 1<<16.
	PackNarrow Packing = 1 << iota
	// PackCodes stores values as 1-byte codes into a dictionary when the
	// rows hold at most 256 distinct float32 bit patterns.
	PackCodes
	// PackCompact is both.
	PackCompact = PackNarrow | PackCodes
	// PackDirect keeps 1-byte codes only with 2-byte indices: the one
	// compact form the SGD kernels read without decoding (CodedRow), so
	// that rows are never decoded before their step. With PackCompact it
	// is the compaction a training copy gets by default.
	PackDirect Packing = 1 << 2
)

// keepCodes reports whether rows whose values fit codes keep them beside
// indices of the given width: always, unless mode has PackDirect and the
// indices are wide.
func (mode Packing) keepCodes(wide bool) bool { return mode&PackDirect == 0 || !wide }

// Pack returns the rows perm[0], perm[1], ... of m packed with the
// encodings of mode that fit them, in that order (perm nil: every row in
// order): the copy a learner reads sequentially, as CSR.Permute lays it
// out. It panics if an entry of perm is out of range.
func Pack(m *CSR, perm []int32, mode Packing) *Packed {
	n := m.Rows()
	if perm != nil {
		n = len(perm)
	}
	row := func(i int) int {
		if perm == nil {
			return i
		}
		return int(perm[i])
	}
	var (
		d     dictionary
		coded = mode&PackCodes != 0
		nnz   int
		dim   int
	)
	for i := range n {
		r := row(i)
		lo, hi := m.Ptr[r], m.Ptr[r+1]
		nnz += hi - lo
		if hi > lo {
			dim = max(dim, int(m.Idx[hi-1])+1)
		}
		if perm != nil && coded {
			coded = d.addAll(m.Val[lo:hi])
		}
	}
	if perm == nil && coded {
		coded = d.addAll(m.Val[:nnz])
	}
	p := &Packed{labels: make([]float32, n), ptr: make([]int, n+1), dim: dim}
	if mode&PackNarrow != 0 && dim <= 1<<16 {
		p.idx16 = make([]uint16, nnz)
	} else {
		p.idx32, p.wide = make([]uint32, nnz), true
	}
	coded = coded && mode.keepCodes(p.wide)
	if coded {
		p.dict, p.ncodes = d.values(), d.n
		p.codes = make([]uint8, nnz)
	} else {
		p.val = make([]float32, nnz)
	}
	off := 0
	for i := range n {
		r := row(i)
		lo, hi := m.Ptr[r], m.Ptr[r+1]
		p.labels[i] = m.Labels[r]
		k := hi - lo
		if !p.wide {
			narrow(p.idx16[off:off+k], m.Idx[lo:hi])
		} else {
			copy(p.idx32[off:], m.Idx[lo:hi])
		}
		if coded {
			d.encode(p.codes[off:off+k], m.Val[lo:hi])
		} else {
			copy(p.val[off:], m.Val[lo:hi])
		}
		off += k
		p.ptr[i+1] = off
		p.maxRow = max(p.maxRow, k)
	}
	return p
}

// narrow sets dst[i] = uint16(src[i]); every src[i] is below 1<<16.
func narrow(dst []uint16, src []uint32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = uint16(v)
	}
}

// PermuteInto returns the rows perm[0], perm[1], ... of p in dst (nil: a
// new Packed), reusing dst's arrays when they are large enough, in p's
// encoding: a pair's rows of a one-vs-one run, copied so that they are read
// sequentially. It panics if an entry of perm is out of range.
func (p *Packed) PermuteInto(dst *Packed, perm []int32) *Packed {
	nnz := 0
	for _, r := range perm {
		nnz += p.ptr[r+1] - p.ptr[r]
	}
	if dst == nil {
		dst = new(Packed)
	}
	dst.labels = resize(dst.labels, len(perm))
	dst.ptr = resize(dst.ptr, len(perm)+1)
	dst.idx16, dst.idx32, dst.codes, dst.val = dst.idx16[:0], dst.idx32[:0], dst.codes[:0], dst.val[:0]
	if !p.wide {
		dst.idx16 = resize(dst.idx16, nnz)
	} else {
		dst.idx32 = resize(dst.idx32, nnz)
	}
	dst.wide, dst.dict, dst.ncodes = p.wide, p.dict, p.ncodes
	if p.dict != nil {
		dst.codes = resize(dst.codes, nnz)
	} else {
		dst.val = resize(dst.val, nnz)
	}
	dst.ptr[0], dst.dim, dst.maxRow = 0, 0, 0
	off := 0
	for i, r := range perm {
		lo, hi := p.ptr[r], p.ptr[r+1]
		k := hi - lo
		if !p.wide {
			copy(dst.idx16[off:], p.idx16[lo:hi])
		} else {
			copy(dst.idx32[off:], p.idx32[lo:hi])
		}
		if p.dict != nil {
			copy(dst.codes[off:], p.codes[lo:hi])
		} else {
			copy(dst.val[off:], p.val[lo:hi])
		}
		off += k
		dst.ptr[i+1] = off
		dst.labels[i] = p.labels[r]
		dst.maxRow = max(dst.maxRow, k)
		if k > 0 {
			dst.dim = max(dst.dim, int(p.index(hi-1))+1)
		}
	}
	return dst
}

// index returns the feature index of nonzero i.
func (p *Packed) index(i int) uint32 {
	if !p.wide {
		return uint32(p.idx16[i])
	}
	return p.idx32[i]
}

// dictionary maps float32 bit patterns to codes 0..255 in order of first
// appearance: an open-addressing table of dictSlots slots, linear probing.
type dictionary struct {
	keys  [dictSlots]uint32
	codes [dictSlots]uint16 // code+1; 0: empty slot
	vals  [256]float32
	n     int
}

const (
	dictBits  = 10
	dictSlots = 1 << dictBits // four times the most codes: short probes
)

// slot returns the slot of bit pattern b: its own, or the empty slot
// where it belongs.
func (d *dictionary) slot(b uint32) int {
	h := int((b * 0x9E3779B1) >> (32 - dictBits))
	for d.codes[h] != 0 && d.keys[h] != b {
		h = (h + 1) & (dictSlots - 1)
	}
	return h
}

// addAll adds the values of v and reports whether they all fit (at most
// 256 distinct bit patterns so far).
func (d *dictionary) addAll(v []float32) bool {
	for _, x := range v {
		b := math.Float32bits(x)
		h := d.slot(b)
		if d.codes[h] != 0 {
			continue
		}
		if d.n == len(d.vals) {
			return false
		}
		d.keys[h], d.codes[h] = b, uint16(d.n+1)
		d.vals[d.n] = x
		d.n++
	}
	return true
}

// encode sets dst[i] to the code of v[i]; every value was added.
func (d *dictionary) encode(dst []uint8, v []float32) {
	dst = dst[:len(v)]
	for i, x := range v {
		dst[i] = uint8(d.codes[d.slot(math.Float32bits(x))] - 1)
	}
}

// values returns the dictionary's values by code (unused codes 0).
func (d *dictionary) values() *[256]float32 {
	v := d.vals
	return &v
}
