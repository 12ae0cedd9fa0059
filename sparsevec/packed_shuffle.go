package sparsevec

import (
	"fmt"
	"iter"
	"runtime/debug"
)

// Packer collects rows block by block, in order, packing each block as it
// is appended (Pack, with the Packer's Packing), so that a data set read
// in blocks (reader.OpenBlocks) never exists in memory as a CSR. Shuffle
// then lays the rows out in a permuted order as one Packed. The zero value
// packs with no compact encoding; NewPacker chooses one.
type Packer struct {
	mode Packing
	segs []*Packed
	rows int
	nnz  int
	dim  int
}

// NewPacker returns an empty Packer that packs with the encodings of mode.
func NewPacker(mode Packing) *Packer { return &Packer{mode: mode} }

// Append packs a copy of the rows of m after those appended before; m may
// be reused once it returns.
func (b *Packer) Append(m *CSR) {
	if m.Rows() == 0 {
		return
	}
	s := Pack(m, nil, b.mode)
	b.segs = append(b.segs, s)
	b.rows += s.Rows()
	b.nnz += s.NNZ()
	b.dim = max(b.dim, s.dim)
}

// Rows returns the number of rows appended.
func (b *Packer) Rows() int { return b.rows }

// NNZ returns the number of nonzeros appended.
func (b *Packer) NNZ() int { return b.nnz }

// Dim returns one more than the largest index appended (0 if none).
func (b *Packer) Dim() int { return b.dim }

// DistinctLabels returns the distinct labels of the rows appended, in
// ascending order.
func (b *Packer) DistinctLabels() []float32 {
	lists := make([][]float32, len(b.segs))
	for i, s := range b.segs {
		lists[i] = s.labels
	}
	return distinctLabels(lists...)
}

// Bytes returns the bytes of the packed blocks held.
func (b *Packer) Bytes() int64 {
	var n int64
	for _, s := range b.segs {
		n += s.Bytes()
	}
	return n
}

// Blocks returns the rows appended to b as CSR blocks, one per Append, in
// order, decoded into one buffer: a block is valid until the next is
// yielded. The sequence may be iterated again.
func (b *Packer) Blocks() iter.Seq[*CSR] {
	return func(yield func(*CSR) bool) {
		var m CSR
		for _, s := range b.segs {
			s.unpackInto(&m)
			if !yield(&m) {
				return
			}
		}
	}
}

// Map replaces the rows appended to b, block by block, with f of them
// (packed again; f's result is not kept): a row map such as a scaling
// applied without holding the rows as one CSR. f may return its argument
// or a new CSR with the same number of rows.
func (b *Packer) Map(f func(*CSR) *CSR) {
	var m CSR
	b.nnz, b.dim = 0, 0
	for i, s := range b.segs {
		s.unpackInto(&m)
		b.segs[i] = Pack(f(&m), nil, b.mode)
		b.nnz += b.segs[i].NNZ()
		b.dim = max(b.dim, b.segs[i].dim)
	}
}

// unpackInto sets m to the rows of p as a CSR, reusing m's arrays.
func (p *Packed) unpackInto(m *CSR) {
	n, nnz := p.Rows(), p.NNZ()
	m.Labels = append(m.Labels[:0], p.labels...)
	m.Ptr = append(m.Ptr[:0], p.ptr...)
	m.Idx, m.Val, m.Qid, m.Dim = resize(m.Idx, nnz), resize(m.Val, nnz), m.Qid[:0], p.dim
	if n == 0 {
		m.Ptr = m.Ptr[:0]
	}
	if p.wide {
		copy(m.Idx, p.idx32)
	} else {
		widen(m.Idx, p.idx16)
	}
	if p.dict != nil {
		decode(m.Val, p.codes, p.dict)
	} else {
		copy(m.Val, p.val)
	}
}

// shuffleGroups is the number of groups Shuffle moves the rows through:
// the memory it holds beyond one copy of the rows is about 1/shuffleGroups
// of them.
const shuffleGroups = 8

// shuffleBucket is one group of Shuffle: the rows bound for a range of
// result positions, in the order they were appended, in the result's
// encoding.
type shuffleBucket struct {
	idx16 []uint16
	idx32 []uint32
	codes []uint8
	val   []float32
	n     int // nonzeros filled
}

// Shuffle returns the rows appended to b in the order perm, row i of the
// result being appended row perm[i] (counted from 0 across blocks), and
// empties b. The result uses an encoding of b's Packing when every block
// fits it: 2-byte indices when every index is below 1<<16, codes when the
// blocks' values take at most 256 distinct bit patterns together. It
// panics unless perm is a permutation of 0..Rows()-1.
//
// The rows move twice, and each move frees what it has read: first to
// shuffleGroups groups by their result position (a group covers an eighth
// of the result's rows, which it holds in block order), each block
// dropped once its rows have moved; then group by group to their result
// positions, each group dropped once laid out. After every eighth of the
// rows the freed memory is handed back to the operating system
// (debug.FreeOSMemory), so the process holds about one copy of the rows
// plus an eighth at any time, where a direct permutation would hold two
// copies. The result's arrays are allocated first and written in order,
// so their pages become resident only as they fill.
func (b *Packer) Shuffle(perm []int32) *Packed {
	n := b.rows
	if len(perm) != n {
		panic(fmt.Sprintf("sparsevec: Shuffle of %d rows with a permutation of %d", n, len(perm)))
	}
	inv := make([]int32, n)
	for i := range inv {
		inv[i] = -1
	}
	for i, r := range perm {
		if inv[r] >= 0 {
			panic(fmt.Sprintf("sparsevec: Shuffle with row %d twice in the permutation", r))
		}
		inv[r] = int32(i)
	}
	out := b.layout(inv)
	groups := shuffleGroups
	bound := make([]int, groups+1)
	for g := range bound {
		bound[g] = int(int64(g) * int64(n) / int64(groups))
	}
	groupOf := func(i int) int {
		g := int(int64(i) * int64(groups) / int64(max(n, 1)))
		for i >= bound[g+1] {
			g++
		}
		for i < bound[g] {
			g--
		}
		return g
	}
	buckets := make([]shuffleBucket, groups)
	for g := range buckets {
		k := out.ptr[bound[g+1]] - out.ptr[bound[g]]
		bk := &buckets[g]
		if out.wide {
			bk.idx32 = make([]uint32, k)
		} else {
			bk.idx16 = make([]uint16, k)
		}
		if out.dict != nil {
			bk.codes = make([]uint8, k)
		} else {
			bk.val = make([]float32, k)
		}
	}
	off := make([]int, n) // where result row i starts in its bucket
	b.scatter(out, inv, groupOf, buckets, off)
	inv = nil
	for g := range buckets {
		bk := &buckets[g]
		for i := bound[g]; i < bound[g+1]; i++ {
			lo, hi := out.ptr[i], out.ptr[i+1]
			o := off[i]
			e := o + hi - lo
			if out.wide {
				copy(out.idx32[lo:hi], bk.idx32[o:e])
			} else {
				copy(out.idx16[lo:hi], bk.idx16[o:e])
			}
			if out.dict != nil {
				copy(out.codes[lo:hi], bk.codes[o:e])
			} else {
				copy(out.val[lo:hi], bk.val[o:e])
			}
		}
		*bk = shuffleBucket{}
		debug.FreeOSMemory()
	}
	return out
}

// layout returns the empty result of Shuffle: the encoding common to b's
// blocks, the labels, the row offsets and MaxRow of the rows in result
// order (inv maps an appended row to its result position), and the index
// and value arrays allocated but not written.
func (b *Packer) layout(inv []int32) *Packed {
	n := b.rows
	out := &Packed{labels: make([]float32, n), ptr: make([]int, n+1), dim: b.dim}
	out.wide = b.mode&PackNarrow == 0 || b.dim > 1<<16
	var d dictionary
	coded := b.mode&PackCodes != 0
	g := 0
	for _, s := range b.segs {
		out.wide = out.wide || s.wide
		if coded {
			coded = s.dict != nil && d.addAll(s.dict[:s.ncodes])
		}
		for r := range s.Rows() {
			i := inv[g]
			k := s.ptr[r+1] - s.ptr[r]
			out.ptr[i+1] = k
			out.labels[i] = s.labels[r]
			out.maxRow = max(out.maxRow, k)
			g++
		}
	}
	for i := range n {
		out.ptr[i+1] += out.ptr[i]
	}
	nnz := out.ptr[n]
	if out.wide {
		out.idx32 = make([]uint32, nnz)
	} else {
		out.idx16 = make([]uint16, nnz)
	}
	if coded {
		out.dict, out.ncodes = d.values(), d.n
		out.codes = make([]uint8, nnz)
	} else {
		out.val = make([]float32, nnz)
	}
	return out
}

// scatter moves every appended row to the bucket of its result position
// (groupOf), in out's encoding, recording its offset there in off, and
// drops each block once moved, handing the memory back to the operating
// system after every 1/len(buckets) of the nonzeros.
func (b *Packer) scatter(out *Packed, inv []int32, groupOf func(int) int, buckets []shuffleBucket, off []int) {
	var (
		recode [256]uint8 // a block's codes to out's
		d      dictionary
	)
	if out.dict != nil {
		d.addAll(out.dict[:out.ncodes])
	}
	step := b.nnz/len(buckets) + 1
	moved, g := 0, 0
	for si, s := range b.segs {
		if out.dict != nil {
			d.encode(recode[:s.ncodes], s.dict[:s.ncodes])
		}
		for r := range s.Rows() {
			i := int(inv[g])
			g++
			bk := &buckets[groupOf(i)]
			lo, hi := s.ptr[r], s.ptr[r+1]
			o := bk.n
			e := o + hi - lo
			off[i] = o
			switch {
			case out.wide && s.wide:
				copy(bk.idx32[o:e], s.idx32[lo:hi])
			case out.wide:
				widenGo(bk.idx32[o:e], s.idx16[lo:hi])
			default:
				copy(bk.idx16[o:e], s.idx16[lo:hi])
			}
			switch {
			case out.dict != nil:
				dst := bk.codes[o:e]
				for j, c := range s.codes[lo:hi] {
					dst[j] = recode[c]
				}
			case s.dict != nil:
				decodeGo(bk.val[o:e], s.codes[lo:hi], s.dict)
			default:
				copy(bk.val[o:e], s.val[lo:hi])
			}
			bk.n = e
		}
		b.segs[si] = nil
		if moved += s.NNZ(); moved >= step {
			moved = 0
			debug.FreeOSMemory()
		}
	}
	*b = Packer{mode: b.mode}
}
