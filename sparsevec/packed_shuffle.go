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
	mode  Packing
	segs  []*Packed
	rows  int
	nnz   int
	dim   int
	buf   CSR // Blocks' and Map's decoded block
	alias CSR // Blocks' and Map's block read in place
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
	b.buf = CSR{} // unpack sizes it for the blocks
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
// order, decoded into one buffer that b keeps (or aliasing b's blocks when
// they hold 4-byte indices and values): a block is valid until the next is
// yielded and must not be modified. The sequence may be iterated again;
// after the first iteration it allocates nothing.
func (b *Packer) Blocks() iter.Seq[*CSR] {
	return func(yield func(*CSR) bool) {
		for _, s := range b.segs {
			if !yield(b.unpack(s)) {
				return
			}
		}
	}
}

// Map replaces the rows appended to b, block by block, with f of them
// (packed again; f's result is not kept): a row map such as a scaling
// applied without holding the rows as one CSR. f may return its argument
// or a new CSR with the same number of rows. The memory of the replaced
// blocks is handed back to the operating system as they go (releaser), so
// that the process holds about one copy of the rows plus 1/16.
func (b *Packer) Map(f func(*CSR) *CSR) {
	rel := newReleaser(b.nnz)
	b.nnz, b.dim = 0, 0
	for i, s := range b.segs {
		b.segs[i] = Pack(f(b.unpack(s)), nil, b.mode)
		b.nnz += b.segs[i].NNZ()
		b.dim = max(b.dim, b.segs[i].dim)
		rel.freed(s.NNZ())
	}
	b.buf = CSR{} // sized for the blocks before f
}

// MapEntries rewrites the rows appended to b row by row, as Map of the
// map that applies f to each row: f gets a row's indices and values,
// writes the entries it keeps to their front, in order and with the
// indices they had, and returns how many (a scaling that keeps zeros at
// zero, scale.Scaler.ScaleInPlace). The blocks are those Map gives, in
// the same encodings. A block of 4-byte indices and values is rewritten
// in place, without a copy, unless its rewritten rows take a more compact
// encoding of b's Packing (then it is packed again); other blocks are
// decoded, rewritten and packed again, as Map does.
func (b *Packer) MapEntries(f func(idx []uint32, val []float32) int) {
	rel := newReleaser(b.nnz)
	b.nnz, b.dim = 0, 0
	for i, s := range b.segs {
		inPlace := s.wide && s.dict == nil
		if inPlace {
			s.rewrite(f)
		}
		if !inPlace || b.mode.compacts(s) {
			m := b.unpack(s)
			if !inPlace {
				rewriteRows(m, f)
			}
			b.segs[i] = Pack(m, nil, b.mode)
			rel.freed(s.NNZ())
		}
		b.nnz += b.segs[i].NNZ()
		b.dim = max(b.dim, b.segs[i].dim)
	}
	b.buf = CSR{}
}

// rewrite applies f to the rows of p, which holds 4-byte indices and
// values, in place (rewriteRows), and sets the dim and maxRow of the rows
// kept.
func (p *Packed) rewrite(f func(idx []uint32, val []float32) int) {
	m := CSR{Labels: p.labels, Ptr: p.ptr, Idx: p.idx32, Val: p.val}
	rewriteRows(&m, f)
	p.idx32, p.val = m.Idx, m.Val
	p.dim, p.maxRow = 0, 0
	for r := range p.Rows() {
		lo, hi := p.ptr[r], p.ptr[r+1]
		if hi > lo {
			p.dim = max(p.dim, int(p.idx32[hi-1])+1)
		}
		p.maxRow = max(p.maxRow, hi-lo)
	}
}

// rewriteRows applies f to every row of m in place, moving the kept
// entries together, and returns m.
func rewriteRows(m *CSR, f func(idx []uint32, val []float32) int) *CSR {
	off := 0
	for r := range m.Rows() {
		lo, hi := m.Ptr[r], m.Ptr[r+1]
		k := f(m.Idx[lo:hi], m.Val[lo:hi])
		if off != lo {
			copy(m.Idx[off:off+k], m.Idx[lo:lo+k])
			copy(m.Val[off:off+k], m.Val[lo:lo+k])
		}
		m.Ptr[r] = off
		off += k
	}
	m.Ptr[m.Rows()] = off
	m.Idx, m.Val = m.Idx[:off], m.Val[:off]
	return m
}

// compacts reports whether Pack with mode stores the rows of p, which
// hold 4-byte indices and values, in a more compact encoding: 2-byte
// indices, or codes beside 4-byte indices.
func (mode Packing) compacts(p *Packed) bool {
	if mode&PackNarrow != 0 && p.dim <= 1<<16 {
		return true
	}
	var d dictionary
	return mode&PackCodes != 0 && mode.keepCodes(true) && d.addAll(p.val)
}

// unpack returns the rows of s, one of b's blocks, as a CSR: aliasing s
// when it holds 4-byte indices and values, else decoded into b's buffer,
// which it sizes for b's largest block the first time.
func (b *Packer) unpack(s *Packed) *CSR {
	if s.wide && s.dict == nil {
		b.alias = CSR{Labels: s.labels, Ptr: s.ptr, Idx: s.idx32, Val: s.val, Dim: s.dim}
		return &b.alias
	}
	if b.buf.Ptr == nil {
		rows, nnz := 0, 0
		for _, t := range b.segs {
			rows, nnz = max(rows, t.Rows()), max(nnz, t.NNZ())
		}
		b.buf = CSR{Labels: make([]float32, 0, rows), Ptr: make([]int, 0, rows+1), Idx: make([]uint32, nnz), Val: make([]float32, nnz)}
	}
	s.unpackInto(&b.buf)
	return &b.buf
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
const shuffleGroups = 16

// shuffleChunkNNZ is the nonzeros of a chunk of a Shuffle group: groups
// grow by chunks as rows arrive, so that their memory becomes resident as
// the blocks' is freed.
const shuffleChunkNNZ = 1 << 16

// shuffleChunk is part of a Shuffle group: whole rows in the result's
// encoding, n nonzeros filled.
type shuffleChunk struct {
	idx16 []uint16
	idx32 []uint32
	codes []uint8
	val   []float32
	n     int
}

// size returns the nonzeros c holds.
func (c *shuffleChunk) size() int { return max(len(c.idx16), len(c.idx32)) }

// spareChunk returns the arrays of s, a block whose rows have all moved,
// as an empty chunk in out's encoding, or nil when s's encoding is not
// out's: Shuffle's groups fill the memory of the blocks they empty, rather
// than new memory while the blocks' is handed back to the system.
func spareChunk(s *Packed, out *Packed) *shuffleChunk {
	if s.wide != out.wide || (s.dict != nil) != (out.dict != nil) || s.NNZ() == 0 {
		return nil
	}
	return &shuffleChunk{idx16: s.idx16, idx32: s.idx32, codes: s.codes, val: s.val}
}

// shuffleGroup is one group of Shuffle: the rows bound for a range of
// result positions, in the order they were appended, in chunks.
type shuffleGroup []*shuffleChunk

// room returns the chunk of g that takes a row of k nonzeros in out's
// encoding and its index, adding one when the last is full: the last of
// spare if it takes the row, else a new one.
func (g *shuffleGroup) room(out *Packed, k int, spare *[]*shuffleChunk) (*shuffleChunk, int) {
	if n := len(*g); n > 0 {
		if c := (*g)[n-1]; c.n+k <= c.size() {
			return c, n - 1
		}
	}
	if n := len(*spare); n > 0 && (*spare)[n-1].size() >= k {
		c := (*spare)[n-1]
		*spare = (*spare)[:n-1]
		*g = append(*g, c)
		return c, len(*g) - 1
	}
	size := max(shuffleChunkNNZ, k)
	c := new(shuffleChunk)
	if out.wide {
		c.idx32 = make([]uint32, size)
	} else {
		c.idx16 = make([]uint16, size)
	}
	if out.dict != nil {
		c.codes = make([]uint8, size)
	} else {
		c.val = make([]float32, size)
	}
	*g = append(*g, c)
	return c, len(*g) - 1
}

// Shuffle returns the rows appended to b in the order perm, row i of the
// result being appended row perm[i] (counted from 0 across blocks), and
// empties b. The result uses an encoding of b's Packing when every block
// fits it: 2-byte indices when every index is below 1<<16, codes when the
// blocks' values take at most 256 distinct bit patterns together. It
// panics unless perm is a permutation of 0..Rows()-1.
//
// The rows move twice, and each move frees what it has read: first to
// shuffleGroups groups by their result position (a group covers 1/16 of
// the result's rows, which it holds in block order, in chunks taken as
// rows arrive: the arrays of blocks already emptied when those are in the
// result's encoding, else new ones), each block dropped once its rows have
// moved; then group by group to their result positions, each group
// dropped once laid out.
// After every 1/16 of the rows (releaser) the freed memory is handed back
// to the operating system (debug.FreeOSMemory), so the process holds about
// one copy of the rows plus 1/16 at any time, where a direct permutation
// would hold two copies. The result's arrays are allocated first and
// written in order, so their pages become resident only as they fill.
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
	bound := make([]int, shuffleGroups+1)
	for g := range bound {
		bound[g] = int(int64(g) * int64(n) / shuffleGroups)
	}
	groupOf := func(i int) int {
		g := int(int64(i) * shuffleGroups / int64(max(n, 1)))
		for i >= bound[g+1] {
			g++
		}
		for i < bound[g] {
			g--
		}
		return g
	}
	groups := make([]shuffleGroup, shuffleGroups)
	at := make([]int, n) // result row i: its chunk << 32 | its offset there
	debug.FreeOSMemory() // what the caller freed before (a reader's buffers)
	b.scatter(out, inv, groupOf, groups, at)
	inv = nil
	rel := newReleaser(out.NNZ())
	for g := range groups {
		for i := bound[g]; i < bound[g+1]; i++ {
			lo, hi := out.ptr[i], out.ptr[i+1]
			c := groups[g][at[i]>>32]
			o := at[i] & (1<<32 - 1)
			e := o + hi - lo
			if out.wide {
				copy(out.idx32[lo:hi], c.idx32[o:e])
			} else {
				copy(out.idx16[lo:hi], c.idx16[o:e])
			}
			if out.dict != nil {
				copy(out.codes[lo:hi], c.codes[o:e])
			} else {
				copy(out.val[lo:hi], c.val[o:e])
			}
		}
		groups[g] = nil
		rel.freed(out.ptr[bound[g+1]] - out.ptr[bound[g]])
	}
	rel.flush()
	return out
}

// releaseMinNNZ is the fewest nonzeros freed between two hand-backs of a
// releaser: each is a full collection, which costs more than holding a
// few megabytes a little longer.
const releaseMinNNZ = 1 << 20

// releaser hands the memory of rows moved out of their arrays back to the
// operating system (debug.FreeOSMemory) after every 1/shuffleGroups of a
// data set's nonzeros, and at least releaseMinNNZ, so that a process that
// moves the rows from one copy to another holds about one copy plus
// 1/shuffleGroups at any time.
type releaser struct{ step, moved int }

// newReleaser returns a releaser for a data set of nnz nonzeros.
func newReleaser(nnz int) releaser {
	return releaser{step: max(nnz/shuffleGroups+1, releaseMinNNZ)}
}

// flush hands back the memory freed since the last hand-back, if any.
func (r *releaser) flush() {
	if r.moved > 0 {
		r.moved = 0
		debug.FreeOSMemory()
	}
}

// freed counts n nonzeros freed and hands the memory back when a step's
// worth has been.
func (r *releaser) freed(n int) {
	if r.moved += n; r.moved >= r.step {
		r.moved = 0
		debug.FreeOSMemory()
	}
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
	coded = coded && b.mode.keepCodes(out.wide)
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

// scatter moves every appended row to the group of its result position
// (groupOf), in out's encoding, recording where it went in at, and drops
// each block once moved: its arrays, when in out's encoding, become chunks
// for the groups (spareChunk), and the rest of the memory is handed back
// to the operating system after every 1/len(groups) of the nonzeros.
func (b *Packer) scatter(out *Packed, inv []int32, groupOf func(int) int, groups []shuffleGroup, at []int) {
	var (
		recode [256]uint8 // a block's codes to out's
		d      dictionary
	)
	if out.dict != nil {
		d.addAll(out.dict[:out.ncodes])
	}
	rel, g := newReleaser(b.nnz), 0
	var spare []*shuffleChunk // emptied blocks' arrays, for the groups
	for si, s := range b.segs {
		if out.dict != nil {
			d.encode(recode[:s.ncodes], s.dict[:s.ncodes])
		}
		for r := range s.Rows() {
			i := int(inv[g])
			g++
			lo, hi := s.ptr[r], s.ptr[r+1]
			c, ci := groups[groupOf(i)].room(out, hi-lo, &spare)
			o := c.n
			e := o + hi - lo
			at[i] = ci<<32 | o
			switch {
			case out.wide && s.wide:
				copy(c.idx32[o:e], s.idx32[lo:hi])
			case out.wide:
				widenGo(c.idx32[o:e], s.idx16[lo:hi])
			default:
				copy(c.idx16[o:e], s.idx16[lo:hi])
			}
			switch {
			case out.dict != nil:
				dst := c.codes[o:e]
				for j, v := range s.codes[lo:hi] {
					dst[j] = recode[v]
				}
			case s.dict != nil:
				decodeGo(c.val[o:e], s.codes[lo:hi], s.dict)
			default:
				copy(c.val[o:e], s.val[lo:hi])
			}
			c.n = e
		}
		if c := spareChunk(s, out); c != nil {
			spare = append(spare, c)
		}
		b.segs[si] = nil
		rel.freed(s.NNZ())
	}
	*b = Packer{mode: b.mode}
}
