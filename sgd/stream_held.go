package sgd

import (
	"fmt"
	"sync"

	"github.com/polyhedral/cpm/sparsevec"
)

// heldBudget scales the budget of a stream's held copy (streamSource,
// heldRows): the copy may take heldBudget times the bytes of the arena it
// stands for. 0 holds nothing (every pass reads the input into the arena);
// the tests set it to compare both ways.
var heldBudget = 1.0

// heldRows is the held copy of a streamed input: its rows in file order,
// packed chunk by chunk as they arrive (sparsevec.Pack with the source's
// Packing: for MNIST 2-byte indices and 1-byte value codes, 3 bytes a
// nonzero against the arena's 8), so that later passes read them from
// memory instead of opening, reading and decoding the input again.
//
// Budget: the copy is held only while its bytes (Packed.Bytes of the
// rows placed so far: nonzeros, labels, offsets, each chunk's dictionary)
// stay within heldBudget × 8 × the arena's capacity in nonzeros, i.e. the
// bytes the arena's indices and values would take at that moment had the
// rows been copied into it. It is checked at every row placed once the
// buffer has been full, and at the end of the first pass: until the
// buffer first fills, every row read is pending, in the arena as in the
// copy, and the copy's fixed costs (a dictionary per chunk) would
// otherwise count against the first rows' small arena. The first row over
// the budget drops the copy, and the shuffle buffer goes on in a real
// arena. The held copy so costs no more than the arena it replaces,
// besides the rest of the chunk being packed (heldChunk: an eighth of the
// buffer at most); when it is dropped, the copy and the arena its pending
// rows move to exist together for a moment.
type heldRows struct {
	segs   []*sparsevec.Packed // chunks of the input's rows, in order
	start  []int               // start[i]: id of the first row of segs[i]; start[len(segs)]: rows held
	perm   []int32             // add's rows of a block
	bytes  int64               // the bytes counted against the budget
	maxRow int                 // nonzeros of the longest row held
	share  *heldShare          // if set, chunks come from and go to it
	own    []*sparsevec.Packed // the chunks of segs this copy packed
}

// heldShare lets the stream sources of one run that read the same input
// (the two polytopes of a double-sided CPM) hold one copy of its rows
// between them: the first source to reach a chunk packs it, the others
// take it, so that the rows take their memory, and their room in the
// caches, once. A chunk is taken only when it holds the same rows (the
// same first row, rows, nonzeros and encodings: the sources read the
// input in the same blocks); a source that reads it otherwise packs its
// own. Each source still counts every chunk it holds against its own
// budget, as if it held it alone, so that whether it keeps its copy does
// not depend on the other. Chunks are read-only once packed. The share
// keeps its chunks only while a source that joined it holds its copy:
// when the last lets its copy go (dropHeld, Close), they go too, so that
// a dropped copy frees its memory as without the share.
type heldShare struct {
	mu     sync.Mutex
	chunks []*sparsevec.Packed
	starts []int
	modes  []sparsevec.Packing
	users  int // sources holding a copy from the share
}

// join attaches h, a copy that holds no rows yet, to the share.
func (sh *heldShare) join(h *heldRows) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h.share = sh
	sh.users++
}

// release detaches h, a copy being let go, from its share, if any.
func (h *heldRows) release() {
	sh := h.share
	if sh == nil {
		return
	}
	h.share = nil
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.users--; sh.users == 0 {
		sh.chunks, sh.starts, sh.modes = nil, nil, nil
	}
}

// chunk returns chunk i of the held copy, the rows perm of block b, whose
// first row is row start of the input, packed with mode: the share's when
// it has that chunk, else packed (and, when it is the share's next chunk,
// added to it). own reports whether it was packed here.
func (sh *heldShare) chunk(i, start int, b *sparsevec.CSR, perm []int32, mode sparsevec.Packing) (p *sparsevec.Packed, own bool) {
	if sh == nil {
		return sparsevec.Pack(b, perm, mode), true
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if i < len(sh.chunks) {
		p := sh.chunks[i]
		nnz := 0
		if len(perm) > 0 {
			nnz = b.Ptr[perm[len(perm)-1]+1] - b.Ptr[perm[0]]
		}
		if sh.starts[i] == start && sh.modes[i] == mode && p.Rows() == len(perm) && p.NNZ() == nnz {
			return p, false
		}
		return sparsevec.Pack(b, perm, mode), true
	}
	p = sparsevec.Pack(b, perm, mode)
	if i == len(sh.chunks) {
		sh.chunks, sh.starts, sh.modes = append(sh.chunks, p), append(sh.starts, start), append(sh.modes, mode)
	}
	return p, true
}

// add packs the rows of block b from row lo on after the rows held (or
// takes them from the share): at most heldChunk(buffer) rows, so that the
// rows packed ahead of those counted (holdRow) are few beside the buffer.
// It counts the chunk's fixed bytes (Packed.Bytes besides its rows).
func (h *heldRows) add(b *sparsevec.CSR, lo, buffer int, mode sparsevec.Packing) {
	hi := min(b.Rows(), lo+heldChunk(buffer))
	h.perm = h.perm[:0]
	for r := lo; r < hi; r++ {
		h.perm = append(h.perm, int32(r))
	}
	p, own := h.share.chunk(len(h.segs), h.rows(), b, h.perm, mode)
	if own {
		h.own = append(h.own, p)
	}
	h.segs = append(h.segs, p)
	h.start = append(h.start, h.rows()+p.Rows())
	h.bytes += p.Bytes() - int64(p.NNZ())*int64(p.NonzeroBytes()) - int64(p.Rows())*sparsevec.RowBytes
	h.bytes += 16 // segs and start
	h.maxRow = max(h.maxRow, p.MaxRow())
}

// heldChunk is the most rows of a held chunk for a buffer of the given
// rows: an eighth of the buffer, between 64 rows (a chunk's dictionary,
// 1 KiB, stays small beside its rows) and reader blocks' 4096.
func heldChunk(buffer int) int { return min(4096, max(64, buffer/8)) }

// rows returns the number of rows held.
func (h *heldRows) rows() int { return h.start[len(h.start)-1] }

// heldHugeBytes is the size of a held copy from which done asks for huge
// pages under it: a smaller copy's 4 KiB pages fit in the TLB (3,072
// entries of the second level, 12 MiB, on the AMD EPYC measured), and
// collapsing its pages would cost more than it saves.
const heldHugeBytes = 16 << 20

// done is called when h holds every row of the input: it sizes dec for
// the longest, so that decoding a held row never allocates, and, when the
// copy takes heldHugeBytes or more, asks for huge pages under the rows it
// packed (sparsevec.AdviseHugePages), which the later passes read in a
// random order.
func (h *heldRows) done(dec *sparsevec.Vector) {
	if h.bytes >= heldHugeBytes {
		sparsevec.AdviseHugePages(h.own)
	}
	if cap(dec.Idx) < h.maxRow || cap(dec.Val) < h.maxRow {
		dec.Idx, dec.Val = make([]uint32, h.maxRow), make([]float32, h.maxRow)
	}
}

// holdRow places the row of n nonzeros just read, one of held's last
// chunk, in the shuffle buffer, counting its place in the arena,
// and drops the held copy if the row takes it over its budget.
func (s *streamSource) holdRow(n int, label float32) {
	h := s.held
	seg := len(h.segs) - 1
	s.place(n, label, seg, h.segs[seg].Start(s.next-h.start[seg]))
	h.bytes += int64(n)*int64(h.segs[seg].NonzeroBytes()) + sparsevec.RowBytes
	s.full = s.full || len(s.pending) >= s.buffer
	if s.full && s.overBudget() {
		s.dropHeld()
	}
}

// overBudget reports whether the held copy takes more than its budget.
func (s *streamSource) overBudget() bool {
	return float64(s.held.bytes) > heldBudget*8*float64(s.acap)
}

// replayRow places row next of the held copy in the shuffle buffer.
func (s *streamSource) replayRow() {
	h := s.held
	for s.next >= h.start[s.seg+1] {
		s.seg++
	}
	r := s.next - h.start[s.seg]
	p := h.segs[s.seg]
	s.place(p.RowNNZ(r), p.Label(r), s.seg, p.Start(r))
	s.next++
}

// place adds row next, nonzeros pos:pos+n of chunk seg of the held copy, to the
// pending rows, where fill would copy it to the arena: the same test for
// compaction, the same offset, and the capacity append would grow the
// arena to.
func (s *streamSource) place(n int, label float32, seg, pos int) {
	if s.alen+n > s.acap && 3*(s.alen-s.live) >= s.acap || s.orderFull() {
		s.compact()
	}
	e := s.push()
	e.off, e.n, e.label, e.seg, e.id, e.pos = s.alen, int32(n), label, int32(seg), s.next, pos
	s.alen += n
	if s.alen > s.acap {
		s.acap = arenaGrow(s.acap, s.alen)
	}
	s.live += n
}

// dropHeld lets the held copy go: the pending rows are copied into an
// arena of the length and capacity counted, each at its offset, and the
// source goes on as if it had never held them.
func (s *streamSource) dropHeld() {
	h := s.held
	s.held = nil
	h.release()
	s.idx, s.val = make([]uint32, s.alen, s.acap), make([]float32, s.alen, s.acap)
	for _, e := range s.pending {
		x := h.segs[e.seg].RowAt(e.pos, int(e.n), &s.dec)
		copy(s.idx[e.off:], x.Idx)
		copy(s.val[e.off:], x.Val)
	}
	s.dec = sparsevec.Vector{}
}

// arenaGrow returns the capacity that append gives a []uint32 (or
// []float32) of capacity c when it grows it to n > c elements, as Go's
// runtime computes it (growslice): the next capacity of nextslicecap
// (double below 256 elements, then about 1.25x, or n if larger), rounded
// up to the allocation's size: the size class of a small allocation
// (found by letting append grow one, at most 32 KiB), whole 8 KiB pages
// for a large one. TestArenaGrow checks it against append.
func arenaGrow(c, n int) int {
	newcap := c
	switch {
	case n > 2*c:
		newcap = n
	case c < 256:
		newcap = 2 * c
	default:
		for newcap < n {
			newcap += (newcap + 3*256) >> 2
		}
	}
	const maxSmall, page = 32 << 10, 8 << 10
	if 4*newcap <= maxSmall {
		return cap(grown(c, n))
	}
	return (4*newcap + page - 1) &^ (page - 1) / 4
}

// grown returns a slice of capacity c appended to length n > c. It is not
// inlined, so that the slice escapes and append grows it on the heap (a
// slice that stays on the stack may start in a buffer of the frame, whose
// capacity is not the heap's).
//
//go:noinline
func grown(c, n int) []uint32 { return append(make([]uint32, c), make([]uint32, n-c)...) }

// stepsStream is task.steps on a stream source: rows of its held copy in
// 2-byte indices and codes are stepped on without decoding
// (polytope.stepCoded) when the kernels read them directly, every other
// row as a Vector (polytope.Step). The checks and their order are those of
// checkedSource.Next and task.steps.
func (t *task) stepsStream(cfg Config, p *polytope, src *checkedSource, n int64) error {
	s := src.streamSource
	for range n {
		e, err := s.draw()
		if err == nil {
			err = src.check(e.label, e.id)
		}
		if err != nil {
			return fmt.Errorf("%s: step %d: %w", t.name, p.t+1, err)
		}
		if s.held != nil && s.direct {
			if x := &s.row; s.held.segs[e.seg].CodedInto(x, e.pos, int(e.n)) {
				if k := len(x.Idx); k > 0 {
					if err := t.fit(&cfg, p, uint32(x.Idx[k-1])); err != nil {
						return fmt.Errorf("%s: step %d: %w", t.name, p.t+1, err)
					}
				}
				p.stepCoded(x, e.label == t.outer, e.id)
				continue
			}
		}
		x := s.vector(e)
		if k := len(x.Idx); k > 0 {
			if err := t.fit(&cfg, p, x.Idx[k-1]); err != nil {
				return fmt.Errorf("%s: step %d: %w", t.name, p.t+1, err)
			}
		}
		p.step(&x, e.label == t.outer, e.id)
	}
	return nil
}
